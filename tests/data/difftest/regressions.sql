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
