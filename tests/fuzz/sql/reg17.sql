SELECT c_custkey FROM customer WHERE (SELECT MAX(o_orderkey) FROM orders WHERE o_custkey = c_custkey) BETWEEN 1 AND 5000
