WITH RECURSIVE t(i, s) AS (SELECT 1, CAST('a' AS VARCHAR) UNION ALL SELECT i + 1, s || 'b' FROM t WHERE i < 20) SELECT i, length(s), substring(s FROM 2 FOR 3) FROM t
