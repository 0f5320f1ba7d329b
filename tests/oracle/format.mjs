// format.mjs - DuckDB values in the answers format of
// ../shared/tpch/answers/README.md, shared by oracle.mjs and difftest.mjs.

// Scaled bigint -> text with exactly two fractional digits.
export function decimalText(unscaled, scale) {
  let a = unscaled < 0n ? -unscaled : unscaled;
  if (scale > 2) {
    const div = 10n ** BigInt(scale - 2);
    const rem = a % div;
    a = a / div + (rem * 2n >= div ? 1n : 0n);
  } else {
    a *= 10n ** BigInt(2 - scale);
  }
  const text = `${a / 100n}.${String(a % 100n).padStart(2, '0')}`;
  return unscaled < 0n && a !== 0n ? `-${text}` : text;
}

export function doubleText(x) {
  if (Number.isNaN(x)) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  const t = Math.abs(x) < 1e21 ? x.toFixed(2) : `${BigInt(x)}.00`;
  return t === '-0.00' ? '0.00' : t;
}

export function cell(value, type, T) {
  if (value === null || value === undefined) return '';
  switch (type.typeId) {
    case T.DECIMAL: return decimalText(value.value, type.scale);
    case T.FLOAT: case T.DOUBLE: return doubleText(Number(value));
    case T.BOOLEAN: return value ? 'true' : 'false';
    case T.VARCHAR: return value;
    case T.LIST: return `[${value.items.map((v) => cell(v, type.valueType, T)).join(', ')}]`;
    default: return typeof value === 'string' ? value : String(value);
  }
}
