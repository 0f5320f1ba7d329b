EXPLAIN ANALYZE SELECT ps_suppkey, sum(ps_supplycost * ps_availqty) FROM partsupp WHERE ps_partkey IN (SELECT p_partkey FROM part WHERE p_name LIKE '%green%') GROUP BY ps_suppkey
