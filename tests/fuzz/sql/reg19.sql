SELECT COUNT(*) AS c0 FROM customer AS t2 LEFT JOIN customer AS t4 ON t2.c_custkey = t4.c_custkey + 1000000 WHERE upper(t4.c_name) IS NULL AND t2.c_address || 'x' >= 'A'
