SELECT r_name FROM region WHERE (SELECT COUNT(*) FROM nation WHERE n_regionkey = r_regionkey + 3) = 0
