# Reduced queries that once gave a different result in Pista than in DuckDB,
# run by tests/sh/test_sql_diff.sh (difftest.mjs --sql-file). One query per
# line; a line starting with '#' is a comment (say what the query caught);
# '-- ordered' at the end of a query compares the rows in order, otherwise
# as a multiset. These stay valid when the generator changes (seeds do not).

# SELECT DISTINCT taken for DISTINCT ON: "DISTINCT ON is not supported"
SELECT DISTINCT n_regionkey FROM nation
SELECT r_name FROM region WHERE r_regionkey IN (SELECT DISTINCT n_regionkey FROM nation WHERE n_nationkey > 20)
# uncorrelated scalar subquery in the SELECT list: "planning: column agg (#7) is not available here"
SELECT r_regionkey, (SELECT COUNT(*) FROM nation) AS c0 FROM region
SELECT (SELECT MAX(n_nationkey) FROM nation) + 1 AS c0
# IN list of 3 or more values as a CASE WHEN condition:
# "expression program: instruction 1: operand 0 out of range"
SELECT CASE WHEN r_regionkey IN (1, 2, 3) THEN 1 ELSE 0 END AS c0 FROM region
SELECT r_name FROM region WHERE CASE WHEN r_name IN ('ASIA', 'EUROPE', 'AFRICA') THEN true ELSE false END
# ... and a SUBSTRING compared in a CASE WHEN condition (same error)
SELECT CASE WHEN SUBSTRING(r_name, 1, 2) <> 'AS' THEN 'yes' ELSE 'no' END AS c0 FROM region
# ORDER BY ... DESC without NULLS FIRST/LAST: DuckDB puts NULLs last (its
# default for ASC and DESC alike), Pista put them first
SELECT c0 FROM (SELECT CASE WHEN r_regionkey < 2 THEN r_regionkey END AS c0 FROM region) AS d ORDER BY c0 DESC -- ordered
# RIGHT JOIN ... USING (k): the name k read the left side's column (NULL on
# unmatched right rows); it is the right side's
SELECT r_regionkey FROM (SELECT * FROM region WHERE r_regionkey < 2) AS t1 RIGHT JOIN region AS t2 USING (r_regionkey) ORDER BY 1 -- ordered
# t.* over a USING join left out t's own USING column
SELECT t2.* FROM region AS t1 LEFT JOIN (SELECT * FROM region WHERE r_regionkey > 2) AS t2 USING (r_regionkey)
# FULL JOIN (once "not supported"): padded rows of both sides, NULL keys, USING as COALESCE
SELECT n_name, r_name FROM (SELECT * FROM nation WHERE n_nationkey < 3) AS n FULL OUTER JOIN (SELECT * FROM region WHERE r_regionkey >= 1) AS r ON n_regionkey = r_regionkey
SELECT a.k, a.x, b.k, b.y FROM (SELECT CASE WHEN n_nationkey < 2 THEN NULL ELSE n_nationkey END AS k, n_name AS x FROM nation WHERE n_nationkey < 4) AS a FULL JOIN (SELECT CASE WHEN r_regionkey = 0 THEN NULL ELSE r_regionkey + 1 END AS k, r_name AS y FROM region) AS b ON a.k = b.k AND a.x <> 'BRAZIL'
SELECT * FROM (SELECT CASE WHEN n_nationkey < 2 THEN NULL ELSE n_nationkey END AS k, n_name AS x FROM nation WHERE n_nationkey < 4) AS a FULL JOIN (SELECT CASE WHEN r_regionkey = 0 THEN NULL ELSE r_regionkey + 1 END AS k, r_name AS y FROM region) AS b USING (k)
# COUNT bug: a correlated aggregate subquery gave NULL, not COUNT's 0, to outer
# rows without inner rows (regions 2, 3, 4 here)
SELECT r_regionkey, (SELECT COUNT(*) FROM nation WHERE n_regionkey = r_regionkey + 3) AS c0, (SELECT COALESCE(SUM(n_nationkey), 0) FROM nation WHERE n_regionkey = r_regionkey + 3) AS c1 FROM region
SELECT r_name FROM region WHERE (SELECT COUNT(*) FROM nation WHERE n_regionkey = r_regionkey + 3) = 0
SELECT c_custkey FROM customer WHERE c_custkey < 100 AND (SELECT COUNT(*) + 1 FROM orders WHERE o_custkey = c_custkey AND o_orderstatus = 'F') < 2
# a correlated aggregate read twice (BETWEEN) was joined twice: endless recursion, a crash
SELECT c_custkey FROM customer WHERE (SELECT MAX(o_orderkey) FROM orders WHERE o_custkey = c_custkey) BETWEEN 1 AND 5000
# a string function's text area of 0 bytes for a chunk (repeat(x, 0); a column of empty or NULL strings): the CUDA evaluator refused its NULL area on sim
SELECT repeat(r_comment, 0) AS c1, SUBSTRING(r_comment FROM 3 FOR 3) AS c2, n_name FROM region AS t1, nation AS t2 WHERE t1.r_regionkey = t2.n_regionkey
SELECT COUNT(*) AS c0 FROM customer AS t2 LEFT JOIN customer AS t4 ON t2.c_custkey = t4.c_custkey + 1000000 WHERE upper(t4.c_name) IS NULL AND t2.c_address || 'x' >= 'A'
# a LATERAL reading one of several FROM items: the domain's column set was cleared past its end once new columns were made (a crash)
SELECT COUNT(*) AS c0, COUNT(l5.x) AS c1 FROM partsupp AS t1, part AS t2, part AS t3 CROSS JOIN LATERAL (SELECT t4.l_commitdate AS x FROM lineitem AS t4 WHERE t4.l_partkey = ps_partkey ORDER BY t4.l_quantity DESC, t4.l_orderkey, t4.l_linenumber LIMIT 3) AS l5 WHERE t1.ps_partkey = t2.p_partkey AND t1.ps_partkey = t3.p_partkey AND t2.p_mfgr NOT LIKE '%turer#3'
