CREATE VIEW v AS SELECT n_name, n_regionkey FROM nation WHERE n_nationkey > 3
