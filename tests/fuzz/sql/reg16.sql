SELECT c_custkey FROM customer WHERE c_custkey < 100 AND (SELECT COUNT(*) + 1 FROM orders WHERE o_custkey = c_custkey AND o_orderstatus = 'F') < 2
