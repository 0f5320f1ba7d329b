SELECT r_regionkey, (SELECT COUNT(*) FROM nation WHERE n_regionkey = r_regionkey + 3) AS c0, (SELECT COALESCE(SUM(n_nationkey), 0) FROM nation WHERE n_regionkey = r_regionkey + 3) AS c1 FROM region
