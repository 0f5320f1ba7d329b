SELECT t2.* FROM region AS t1 LEFT JOIN (SELECT * FROM region WHERE r_regionkey > 2) AS t2 USING (r_regionkey)
