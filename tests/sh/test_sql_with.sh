#!/usr/bin/env bash
# WITH queries: one read several times that aggregates is evaluated once
# (EXPLAIN ANALYZE says so and reads it through ROWS) and gives the same
# rows as when it is inlined; one read once, or not aggregating, or under
# plain EXPLAIN is inlined. Expected values are hand-checked: TPC-H has 25
# nations, 5 per region, with keys 0..24 (key sums per region: AFRICA
# 0+5+14+15+16 = 50, AMERICA 1+2+3+17+24 = 47, ASIA 8+9+12+18+21 = 68,
# EUROPE 6+7+19+22+23 = 77, MIDDLE EAST 4+10+11+13+20 = 58).
set -u
fail=0
check() { # name expected actual
  if [ "$2" == "$3" ]; then echo "ok   $1"; else echo "FAIL $1"; echo "  expected: $2"; echo "  got:      $3"; fail=1; fi
}
has() { # name pattern text
  if echo "$3" | grep -q -- "$2"; then echo "ok   $1"; else echo "FAIL $1 (no '$2')"; echo "$3" | sed 's/^/  /'; fail=1; fi
}
hasnt() { # name pattern text
  if echo "$3" | grep -q -- "$2"; then echo "FAIL $1 ('$2' found)"; echo "$3" | sed 's/^/  /'; fail=1; else echo "ok   $1"; fi
}
D="$PISTA_TEST_DATA/parquet/sf0.01"
q() { "$PISTA" --data "$D" --answers -c "$1" 2>&1; }

twice="with r as (select n_regionkey as k, count(*) as c, sum(n_nationkey) as s from nation group by n_regionkey)
select a.k, a.c, b.s, (select max(s) from r) as top from r a join r b on a.k = b.k order by a.k"
check "materialized: rows" "k|c|s|top
0|5|50|77
1|5|47|77
2|5|68|77
3|5|77|77
4|5|58|77" "$(q "$twice")"
out=$(q "explain analyze $twice")
has "explain analyze: evaluated once" "with: r evaluated once before the query: 5 rows" "$out"
has "explain analyze: read through ROWS" "ROWS 5" "$out"
check "explain analyze: no nation scan in the main plan" "0" "$(echo "$out" | grep -c 'SCAN nation')"
hasnt "plain explain runs nothing" "evaluated once" "$(q "explain $twice")"

# Chained: the second WITH reads the first, both used twice.
chain="with r as (select n_regionkey as k, count(*) as c from nation group by n_regionkey),
     t as (select sum(c) as n from r)
select (select n from t) + (select n from t) as twice_n, (select count(*) from r) as regions, (select min(c) from r) as least"
check "chained WITH" "twice_n|regions|least
50|5|5" "$(q "$chain")"
has "chained: both evaluated once" "with: t evaluated once" "$(q "explain analyze $chain")"

once="with r as (select n_regionkey as k, count(*) as c from nation group by n_regionkey) select sum(c) as n from r"
check "read once: rows" "n
25" "$(q "$once")"
hasnt "read once: inlined" "evaluated once" "$(q "explain analyze $once")"

plain="with r as (select n_nationkey as k from nation where n_regionkey = 1) select count(*) as n from r a, r b where a.k < b.k"
check "not aggregating: rows" "n
10" "$(q "$plain")"
hasnt "not aggregating: inlined (predicates reach the scan)" "evaluated once" "$(q "explain analyze $plain")"

# A WITH ending in LIMIT is evaluated once: both references see the same rows.
lim="with t as (select n_nationkey as k from nation limit 5) select count(*) as n from t a join t b on a.k = b.k"
check "LIMIT WITH joined with itself" "n
5" "$(q "$lim")"
has "LIMIT WITH evaluated once" "with: t evaluated once" "$(q "explain analyze $lim")"

# An error inside a materialized WITH names what was wrong, with its position.
out=$(q "with r as (select n_regionkey, count(*) as c from nation group by n_regionky) select * from r a, r b"); rc=$?
check "error in WITH exits 1" "1" "$rc"
has "error in WITH names the column" "n_regionky" "$out"
exit $fail
