SELECT r_regionkey FROM (SELECT * FROM region WHERE r_regionkey < 2) AS t1 RIGHT JOIN region AS t2 USING (r_regionkey) ORDER BY 1
