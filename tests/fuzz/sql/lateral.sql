SELECT n_name, l.c FROM nation, LATERAL (SELECT count(*) AS c FROM supplier WHERE s_nationkey = n_nationkey AND s_acctbal > 0) AS l ORDER BY 1
