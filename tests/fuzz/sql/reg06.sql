SELECT r_name FROM region WHERE CASE WHEN r_name IN ('ASIA', 'EUROPE', 'AFRICA') THEN true ELSE false END
