SELECT * FROM (VALUES (1, 'a', 1.5), (2, NULL, -0.25), (3, 'c', NULL)) AS v(a, b, c) FULL JOIN generate_series(1, 4) AS g(x) ON a = x ORDER BY x
