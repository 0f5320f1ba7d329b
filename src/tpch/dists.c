/*
 * dists.c - the weighted word lists of TPC-H (spec clauses 4.2.2.13 and
 * 4.2.3; the order and weights are those of dbgen's dists.dss, which the
 * pick order depends on) and the O(1) lookup tables built from them once.
 */
#include "tpch/tpch_int.h"

#include <pthread.h>
#include <stdio.h>


static const char *const nouns[] = {
    "packages", "requests", "accounts", "deposits", "foxes", "ideas", "theodolites",
    "pinto beans", "instructions", "dependencies", "excuses", "platelets", "asymptotes",
    "courts", "dolphins", "multipliers", "sauternes", "warthogs", "frets", "dinos",
    "attainments", "somas", "Tiresias", "patterns", "forges", "braids", "frays",
    "warhorses", "dugouts", "notornis", "epitaphs", "pearls", "tithes", "waters",
    "orbits", "gifts", "sheaves", "depths", "sentiments", "decoys", "realms", "pains",
    "grouches", "escapades", "hockey players"};
static const int nouns_w[] = {40, 40, 40, 40, 20, 20, 20, 20, 20, 10, 10, 10, 10, 5, 5,
                              1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1, 1,
                              1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1, 1};

static const char *const verbs[] = {
    "sleep", "wake", "are", "cajole", "haggle", "nag", "use", "boost", "affix", "detect",
    "integrate", "maintain", "nod", "was", "lose", "sublate", "solve", "thrash",
    "promise", "engage", "hinder", "print", "x-ray", "breach", "eat", "grow", "impress",
    "mold", "poach", "serve", "run", "dazzle", "snooze", "doze", "unwind", "kindle",
    "play", "hang", "believe", "doubt"};
static const int verbs_w[] = {20, 20, 20, 20, 20, 10, 10, 10, 5, 5, 5, 1, 1, 1,
                              1,  1,  1,  1,  1,  1,  1,  1,  1, 1, 1, 1, 1, 1,
                              1,  1,  1,  1,  1,  1,  1,  1,  1, 1, 1, 1};

static const char *const adjectives[] = {
    "special", "pending", "unusual", "express", "furious", "sly", "careful", "blithe",
    "quick", "fluffy", "slow", "quiet", "ruthless", "thin", "close", "dogged", "daring",
    "brave", "stealthy", "permanent", "enticing", "idle", "busy", "regular", "final",
    "ironic", "even", "bold", "silent"};
static const int adjectives_w[] = {20, 20, 20, 20, 1, 1, 1,  1,  1,  1,  1,  1,  1,  1, 1,
                                   1,  1,  1,  1,  1, 1, 1, 1, 50, 40, 40, 30, 20, 10};

static const char *const adverbs[] = {
    "sometimes", "always", "never", "furiously", "slyly", "carefully", "blithely",
    "quickly", "fluffily", "slowly", "quietly", "ruthlessly", "thinly", "closely",
    "doggedly", "daringly", "bravely", "stealthily", "permanently", "enticingly", "idly",
    "busily", "regularly", "finally", "ironically", "evenly", "boldly", "silently"};
static const int adverbs_w[] = {1, 1, 1, 50, 50, 50, 40, 30, 20, 1, 1, 1, 1, 1,
                                1, 1, 1, 1,  1,  1,  1,  1,  1,  1, 1, 1, 1, 1};

static const char *const prepositions[] = {
    "about", "above", "according to", "across", "after", "against", "along",
    "alongside of", "among", "around", "at", "atop", "before", "behind", "beneath",
    "beside", "besides", "between", "beyond", "by", "despite", "during", "except", "for",
    "from", "in place of", "inside", "instead of", "into", "near", "of", "on", "outside",
    "over", "past", "since", "through", "throughout", "to", "toward", "under", "until",
    "up", "upon", "whithout", "with", "within"};
static const int prepositions_w[] = {50, 50, 50, 50, 50, 40, 40, 30, 30, 20, 10, 1, 1, 1, 1, 1,
                                     1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1, 1, 1, 1, 1,
                                     1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1,  1, 1, 1, 1};

static const char *const auxiliaries[] = {
    "do", "may", "might", "shall", "will", "would", "can", "could", "should", "ought to",
    "must", "will have to", "shall have to", "could have to", "should have to",
    "must have to", "need to", "try to"};
static const int auxiliaries_w[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};

static const char *const terminators[] = {".", ";", ":", "?", "!", "--"};
static const int terminators_w[] = {50, 1, 1, 1, 1, 1};

/* Sentence shapes; text.c knows their structure by index. */
static const char *const grammar[] = {"N V T", "N V P T", "N V N T", "N P V N T", "N P V P T"};
static const int grammar_w[] = {3, 3, 3, 1, 1};
static const char *const np[] = {"N", "J N", "J, J N", "D J N"};
static const int np_w[] = {10, 20, 10, 50};
static const char *const vp[] = {"V", "X V", "V D", "X V D"};
static const int vp_w[] = {30, 1, 40, 1};

static const char *const priorities[] = {"1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED",
                                         "5-LOW"};
static const char *const instructions[] = {"DELIVER IN PERSON", "COLLECT COD",
                                           "TAKE BACK RETURN", "NONE"};
static const char *const shipmodes[] = {"REG AIR", "AIR", "RAIL", "TRUCK", "MAIL", "FOB", "SHIP"};
static const char *const rflags[] = {"R", "A"};
static const char *const segments[] = {"AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD",
                                       "MACHINERY"};
static const char *const regions[] = {"AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"};
static const char *const nations[] = {
    "ALGERIA", "ARGENTINA", "BRAZIL", "CANADA", "EGYPT", "ETHIOPIA", "FRANCE", "GERMANY",
    "INDIA", "INDONESIA", "IRAN", "IRAQ", "JAPAN", "JORDAN", "KENYA", "MOROCCO",
    "MOZAMBIQUE", "PERU", "CHINA", "ROMANIA", "SAUDI ARABIA", "VIETNAM", "RUSSIA",
    "UNITED KINGDOM", "UNITED STATES"};
const int tp__nation_region[25] = {0, 1, 1, 1, 4, 0, 3, 3, 2, 2, 4, 4, 2,
                                   4, 0, 0, 0, 1, 2, 3, 4, 2, 3, 3, 1};

/* p_type = one of 6 x 5 x 5 syllable combinations, in dists.dss order. */
static const char *types[150];
static char types_text[150][32];
static const char *const type_s1[] = {"STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"};
static const char *const type_s2[] = {"ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"};
static const char *const type_s3[] = {"TIN", "NICKEL", "BRASS", "STEEL", "COPPER"};
/* p_container = 5 x 8 combinations. */
static const char *containers[40];
static char containers_text[40][16];
static const char *const cont_s1[] = {"SM", "LG", "MED", "JUMBO", "WRAP"};
static const char *const cont_s2[] = {"CASE", "BOX", "BAG", "JAR", "PACK", "PKG", "CAN", "DRUM"};

static const char *const colors[] = {
    "almond", "antique", "aquamarine", "azure", "beige", "bisque", "black", "blanched",
    "blue", "blush", "brown", "burlywood", "burnished", "chartreuse", "chiffon",
    "chocolate", "coral", "cornflower", "cornsilk", "cream", "cyan", "dark", "deep", "dim",
    "dodger", "drab", "firebrick", "floral", "forest", "frosted", "gainsboro", "ghost",
    "goldenrod", "green", "grey", "honeydew", "hot", "indian", "ivory", "khaki", "lace",
    "lavender", "lawn", "lemon", "light", "lime", "linen", "magenta", "maroon", "medium",
    "metallic", "midnight", "mint", "misty", "moccasin", "navajo", "navy", "olive",
    "orange", "orchid", "pale", "papaya", "peach", "peru", "pink", "plum", "powder",
    "puff", "purple", "red", "rose", "rosy", "royal", "saddle", "salmon", "sandy",
    "seashell", "sienna", "sky", "slate", "smoke", "snow", "spring", "steel", "tan",
    "thistle", "tomato", "turquoise", "violet", "wheat", "white", "yellow"};

static int ones[160];
static tp__dist dists[TP__D_COUNT];
static uint8_t lookup_space[4096];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static size_t set(int id, const char *const *words, const int *weights, int count, size_t used)
{
    tp__dist *d = &dists[id];
    d->words = words;
    d->weights = weights ? weights : ones;
    d->count = count;
    d->total = 0;
    for (int i = 0; i < count; i++) {
        d->lens[i] = (uint8_t)strlen(words[i]);
        d->total += d->weights[i];
    }
    uint8_t *lk = lookup_space + used;
    lk[0] = 0;
    int j = 1;
    for (int i = 0; i < count; i++)
        for (int w = 0; w < d->weights[i]; w++)
            lk[j++] = (uint8_t)i;
    d->lookup = lk;
    return used + (size_t)d->total + 1;
}

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

static void build(void)
{
    for (int i = 0; i < 160; i++)
        ones[i] = 1;
    for (int i = 0; i < 150; i++) {
        snprintf(types_text[i], sizeof types_text[i], "%s %s %s", type_s1[i / 25],
                 type_s2[i / 5 % 5], type_s3[i % 5]);
        types[i] = types_text[i];
    }
    for (int i = 0; i < 40; i++) {
        snprintf(containers_text[i], sizeof containers_text[i], "%s %s", cont_s1[i / 8],
                 cont_s2[i % 8]);
        containers[i] = containers_text[i];
    }
    size_t u = 0;
    u = set(TP__D_NOUNS, nouns, nouns_w, N_OF(nouns), u);
    u = set(TP__D_VERBS, verbs, verbs_w, N_OF(verbs), u);
    u = set(TP__D_ADJECTIVES, adjectives, adjectives_w, N_OF(adjectives), u);
    u = set(TP__D_ADVERBS, adverbs, adverbs_w, N_OF(adverbs), u);
    u = set(TP__D_PREPOSITIONS, prepositions, prepositions_w, N_OF(prepositions), u);
    u = set(TP__D_AUXILIARIES, auxiliaries, auxiliaries_w, N_OF(auxiliaries), u);
    u = set(TP__D_TERMINATORS, terminators, terminators_w, N_OF(terminators), u);
    u = set(TP__D_GRAMMAR, grammar, grammar_w, N_OF(grammar), u);
    u = set(TP__D_NP, np, np_w, N_OF(np), u);
    u = set(TP__D_VP, vp, vp_w, N_OF(vp), u);
    u = set(TP__D_PRIORITIES, priorities, NULL, N_OF(priorities), u);
    u = set(TP__D_INSTRUCTIONS, instructions, NULL, N_OF(instructions), u);
    u = set(TP__D_SHIPMODES, shipmodes, NULL, N_OF(shipmodes), u);
    u = set(TP__D_RFLAGS, rflags, NULL, N_OF(rflags), u);
    u = set(TP__D_SEGMENTS, segments, NULL, N_OF(segments), u);
    u = set(TP__D_TYPES, types, NULL, 150, u);
    u = set(TP__D_CONTAINERS, containers, NULL, 40, u);
    u = set(TP__D_COLORS, colors, NULL, N_OF(colors), u);
    u = set(TP__D_NATIONS, nations, NULL, N_OF(nations), u);
    u = set(TP__D_REGIONS, regions, NULL, N_OF(regions), u);
    (void)u;   /* about 2600 of the 4096 bytes */
}

const tp__dist *tp__dists(void)
{
    pthread_once(&once, build);
    return dists;
}
