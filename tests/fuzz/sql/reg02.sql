SELECT r_name FROM region WHERE r_regionkey IN (SELECT DISTINCT n_regionkey FROM nation WHERE n_nationkey > 20)
