SELECT regexp_replace(s_name, '[0-9]+', '#', 'g'), s_phone ~ '^1[0-9]-' FROM supplier WHERE regexp_like(s_address, 'a.c') OR s_name ILIKE '%00%' LIMIT 20
