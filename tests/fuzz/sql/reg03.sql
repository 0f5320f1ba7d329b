SELECT r_regionkey, (SELECT COUNT(*) FROM nation) AS c0 FROM region
