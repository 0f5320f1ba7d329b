SELECT n_name, r_name FROM (SELECT * FROM nation WHERE n_nationkey < 3) AS n FULL OUTER JOIN (SELECT * FROM region WHERE r_regionkey >= 1) AS r ON n_regionkey = r_regionkey
