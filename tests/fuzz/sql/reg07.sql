SELECT CASE WHEN SUBSTRING(r_name, 1, 2) <> 'AS' THEN 'yes' ELSE 'no' END AS c0 FROM region
