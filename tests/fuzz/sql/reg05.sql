SELECT CASE WHEN r_regionkey IN (1, 2, 3) THEN 1 ELSE 0 END AS c0 FROM region
