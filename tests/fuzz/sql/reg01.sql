SELECT DISTINCT n_regionkey FROM nation
