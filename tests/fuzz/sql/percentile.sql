SELECT p_mfgr, percentile_cont(0.5) WITHIN GROUP (ORDER BY p_retailprice), median(p_size), mode() WITHIN GROUP (ORDER BY p_container) FROM part GROUP BY p_mfgr ORDER BY 1
