SELECT (SELECT MAX(n_nationkey) FROM nation) + 1 AS c0
