SELECT repeat(r_comment, 0) AS c1, SUBSTRING(r_comment FROM 3 FOR 3) AS c2, n_name FROM region AS t1, nation AS t2 WHERE t1.r_regionkey = t2.n_regionkey
