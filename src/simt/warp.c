/*
 * warp.c - the warp intrinsics of the SIMT emulation: each is a rendezvous
 * of the lanes its mask names (those that have not exited). A lane that
 * arrives deposits its value and waits; the lane that completes the group
 * computes every lane's result (shuffle, ballot, any, all) and wakes the
 * others. Groups with disjoint masks may wait at once. Lanes that each name
 * the other but wait at different intrinsics (or masks) can never meet and
 * fail the launch at once; other waits that never resolve are found by the
 * scheduler's deadlock check (sched.c). __activemask is resolved when the
 * block has nothing else to run.
 */
#include "simt/simt_int.h"

#include <string.h>

#define POISON64 0xA5A5A5A5A5A5A5A5ull


/* Lane l's shuffle source, by CUDA's rules for width-wide segments. */
static uint32_t shfl_src(const simt_thr *t, uint32_t l)
{
    uint32_t wd = (uint32_t)t->width, arg = (uint32_t)t->arg, seg = l & ~(wd - 1);
    switch (t->op) {
    case SIMT_OP_SHFL_IDX:
        return seg + (arg & (wd - 1));
    case SIMT_OP_SHFL_UP:
        return (l & (wd - 1)) >= arg ? l - arg : l;
    case SIMT_OP_SHFL_DOWN:
        return (l & (wd - 1)) + arg < wd ? l + arg : l;
    default: /* XOR: earlier segments may be read, later ones give the own value */
        return (l ^ arg) >= seg + wd ? l : l ^ arg;
    }
}

/* Every lane of need (one group: same op and mask) has arrived at warp wi:
 * compute each lane's result and wake them all but the running one. */
static void warp_complete(simt_worker *w, uint32_t wi, uint32_t need, const simt_thr *running)
{
    simt_thr *lanes = &w->thr[wi * 32];
    int op = lanes[__builtin_ctz(need)].op;
    if (op >= SIMT_OP_SHFL_IDX && op <= SIMT_OP_SHFL_XOR) {
        for (uint32_t m = need; m; m &= m - 1) {
            uint32_t l = (uint32_t)__builtin_ctz(m), s = shfl_src(&lanes[l], l);
            lanes[l].result = s == l ? lanes[l].val : s < 32 && (need >> s & 1) ? lanes[s].val : POISON64;
        }
    } else {
        uint32_t ballot = 0;
        for (uint32_t m = need; m; m &= m - 1) {
            uint32_t l = (uint32_t)__builtin_ctz(m);
            if (lanes[l].val)
                ballot |= 1u << l;
        }
        uint64_t r = op == SIMT_OP_BALLOT ? ballot
                     : op == SIMT_OP_ANY  ? ballot != 0
                     : op == SIMT_OP_ALL  ? ballot == need
                                          : 0;
        for (uint32_t m = need; m; m &= m - 1)
            lanes[__builtin_ctz(m)].result = r;
    }
    w->warp_arrived[wi] &= ~need;
    for (uint32_t m = need; m; m &= m - 1) {
        simt_thr *t = &lanes[__builtin_ctz(m)];
        if (t != running)
            simt__wake(w, t);
    }
    w->st.warp_ops++;
}

/* The lanes waiting at warp wi at op with mask. */
static uint32_t group_of(const simt_worker *w, uint32_t wi, int op, uint32_t mask)
{
    if (!w->grp_mixed[wi])
        return w->grp_mask[wi] == mask && w->grp_op[wi] == op ? w->warp_arrived[wi] : 0;
    uint32_t g = 0;
    for (uint32_t m = w->warp_arrived[wi]; m; m &= m - 1) {
        uint32_t l = (uint32_t)__builtin_ctz(m);
        const simt_thr *o = &w->thr[wi * 32 + l];
        if (o->mask == mask && o->op == op)
            g |= 1u << l;
    }
    return g;
}

/* Complete the group of op and mask at warp wi if every lane it still
 * needs (those of mask that have not exited) waits at it. */
static bool try_complete(simt_worker *w, uint32_t wi, int op, uint32_t mask, const simt_thr *running)
{
    uint32_t need = mask & w->warp_live[wi];
    if (!need || (group_of(w, wi, op, mask) & need) != need)
        return false;
    warp_complete(w, wi, need, running);
    return true;
}

/* After a lane of warp wi exited: complete every group that now has all
 * its remaining lanes. */
void simt__warp_recheck(simt_worker *w, uint32_t wi)
{
    uint32_t pending = w->warp_arrived[wi];
    while (pending) {
        const simt_thr *first = &w->thr[wi * 32 + (uint32_t)__builtin_ctz(pending)];
        int op = first->op;
        uint32_t mask = first->mask;
        pending &= ~group_of(w, wi, op, mask);
        try_complete(w, wi, op, mask, NULL);
    }
}

/* A lane waiting at warp wi that can never meet lane `lane` arriving at op
 * with mask: each names the other, at different intrinsics or masks (each
 * waits for the other to join it). Returns that lane or -1. Waits that are
 * not mutual may still resolve and are left to the deadlock detection. */
static int warp_conflict(const simt_worker *w, uint32_t wi, uint32_t lane, int op, uint32_t mask)
{
    for (uint32_t m = w->warp_arrived[wi] & mask; m; m &= m - 1) {
        uint32_t l = (uint32_t)__builtin_ctz(m);
        const simt_thr *o = &w->thr[wi * 32 + l];
        if ((o->mask >> lane & 1) && (o->mask != mask || o->op != op))
            return (int)l;
    }
    return -1;
}

/* A warp intrinsic outside a kernel: the caller is a warp of one lane. */
static uint64_t warp_alone(int op, uint64_t value)
{
    switch (op) {
    case SIMT_OP_BALLOT: return value != 0;
    case SIMT_OP_ANY:
    case SIMT_OP_ALL: return value != 0;
    case SIMT_OP_SYNCWARP: return 0;
    default: return value;
    }
}

uint64_t simt__warp(int op, unsigned mask, uint64_t value, int arg, int width, const char *site)
{
    simt_worker *w = simt__cur_w;
    simt_thr *t = simt__cur_t;
    if (!w || !t)
        return warp_alone(op, value);
    uint32_t lane = t->lin & 31, wi = t->lin >> 5, bit = 1u << lane;
    if (!(mask & bit))
        simt__fail(w, t, PA_EDEVICE, "%s at %s with mask 0x%08x, which does not name the calling lane %u",
                   simt__op_name(op), site, mask, lane);
    if (op >= SIMT_OP_SHFL_IDX && op <= SIMT_OP_SHFL_XOR && (width < 1 || width > 32 || (width & (width - 1))))
        simt__fail(w, t, PA_EDEVICE, "%s at %s with width %d: not a power of two from 1 to 32", simt__op_name(op),
                   site, width);
    t->op = (uint8_t)op;
    t->mask = mask;
    t->val = value;
    t->arg = arg;
    t->width = width;
    t->site = site;
    if (!w->warp_arrived[wi]) {   /* the first lane: a new group */
        w->grp_mask[wi] = mask;
        w->grp_op[wi] = (uint8_t)op;
        w->grp_mixed[wi] = false;
    } else if (w->grp_mixed[wi] || w->grp_mask[wi] != mask || w->grp_op[wi] != op) {
        int c = warp_conflict(w, wi, lane, op, mask);
        if (c >= 0) {
            const simt_thr *o = &w->thr[wi * 32 + (uint32_t)c];
            simt__fail(w, t, PA_EDEVICE,
                       "lanes of warp %u disagree: lane %u reached %s (mask 0x%08x) at %s while lane %d waits at %s "
                       "(mask 0x%08x) at %s",
                       wi, lane, simt__op_name(op), mask, site, c, simt__op_name(o->op), o->mask, o->site);
        }
        w->grp_mixed[wi] = true;   /* disjoint groups wait at once */
    }
    w->warp_arrived[wi] |= bit;
    if (try_complete(w, wi, op, mask, t))
        return t->result;
    t->state = SIMT_T_WARP;
    simt__wait(w, t);
    return t->result;
}

unsigned simt__activemask(const char *site)
{
    simt_worker *w = simt__cur_w;
    simt_thr *t = simt__cur_t;
    if (!w || !t)
        return 1;
    t->site = site;
    t->state = SIMT_T_AMASK;
    w->n_amask++;
    simt__wait(w, t);
    return (unsigned)t->result;
}

/* Scheduler context, nothing runnable: the lanes of each warp waiting at
 * the same __activemask call are the active ones. */
void simt__resolve_activemask(simt_worker *w)
{
    for (uint32_t i = 0; i < w->n; i++) {
        simt_thr *t = &w->thr[i];
        if (t->state != SIMT_T_AMASK)
            continue;
        uint32_t wi = i >> 5, group = 0;
        for (uint32_t l = i & 31; l < 32 && wi * 32 + l < w->n; l++) {
            const simt_thr *o = &w->thr[wi * 32 + l];
            if (o->state == SIMT_T_AMASK && simt__same_site(o->site, t->site))
                group |= 1u << l;
        }
        for (uint32_t m = group; m; m &= m - 1) {
            simt_thr *o = &w->thr[wi * 32 + (uint32_t)__builtin_ctz(m)];
            o->result = group;
            simt__wake(w, o);
            w->n_amask--;
        }
    }
}
