SELECT r_name, string_agg(n_name, ', ' ORDER BY n_name), count(DISTINCT n_nationkey % 3) FROM region JOIN nation ON n_regionkey = r_regionkey GROUP BY r_name HAVING count(*) > 1 ORDER BY 1
