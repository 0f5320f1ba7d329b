SELECT p_brand, p_size, count(*), min(p_retailprice), stddev_samp(p_size), bool_and(p_size > 10) FROM part GROUP BY ROLLUP (p_brand, p_size) ORDER BY 1 NULLS FIRST, 2 LIMIT 30
