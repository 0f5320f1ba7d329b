SELECT c0 FROM (SELECT CASE WHEN r_regionkey < 2 THEN r_regionkey END AS c0 FROM region) AS d ORDER BY c0 DESC
