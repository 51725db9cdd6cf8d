//! SQL text generators: typed expressions over the test schema (valid), valid text
//! mutated at the character and token level, random token soup, and deep and wide
//! shapes.

use super::common::Rng;

/// The numeric columns of `common::schema()`.
const NUMERIC: &[&str] = &[
    "a", "b", "f32", "i", "j", "k", "i16", "t8", "u8", "u32", "u64",
];
const TYPES: &[&str] = &[
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "UTINYINT",
    "USMALLINT",
    "UINTEGER",
    "UBIGINT",
    "REAL",
    "DOUBLE",
    "FLOAT",
    "INT",
    "BOOLEAN",
    "VARCHAR",
    "DATE",
    "TIMESTAMP",
    "TIMESTAMP(3)",
];
const PATTERNS: &[&str] = &[
    "a%", "%c", "%b%", "abc", "a_c", "%", "AB%", "h_llo", "%\\%%", "b\\%c", "%É%", "", "_", "%%",
    "a\\", "\\", "[a-z]%", ".*",
];
const WORDS: &[&str] = &[
    "",
    "a",
    "ab",
    "abc",
    "AB",
    "xyz",
    "héllo",
    "AIR",
    "MAIL",
    "it''s",
    "1995-01-01",
];
const NUM_LITERALS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "7",
    "10",
    "-10",
    "127",
    "128",
    "255",
    "256",
    "32767",
    "2147483647",
    "-2147483648",
    "4294967295",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "0.0",
    "-0.0",
    "0.5",
    "2.5",
    "-2.5",
    "1e3",
    "1e308",
    "1e309",
    "-1e-320",
    "3.14159",
    "'NaN'::DOUBLE",
    "CAST('Infinity' AS DOUBLE)",
    "CAST('-inf' AS REAL)",
    "TINYINT '5'",
    "SMALLINT '-3'",
    "UBIGINT '3'",
    "REAL '1.5'",
    "NULL",
    "CAST(NULL AS INTEGER)",
];
const DATES: &[&str] = &[
    "DATE '1995-03-15'",
    "DATE '1994-01-01'",
    "DATE '0001-01-01'",
    "DATE '9999-12-31'",
    "'1995-06-01'",
    "CAST('1996-02-29' AS DATE)",
];
const TIMESTAMPS: &[&str] = &[
    "TIMESTAMP '1995-03-15 12:00:00'",
    "TIMESTAMP '1994-01-01'",
    "TIMESTAMP(3) '1995-03-15 12:00:00.123'",
    "TIMESTAMP(0) WITH TIME ZONE '1995-03-15 00:00:00+02'",
    "TIMESTAMP(9) '2262-04-11 23:47:16'",
    "'1995-06-01 10:00:00'",
];

fn pick<'a>(r: &mut Rng, items: &[&'a str]) -> &'a str {
    items[r.below(items.len() as u64) as usize]
}

/// A generator of typed SQL text. `risky` counts the enclosing NULLIF, BETWEEN and
/// simple CASE nodes, kept at most [`Gen::MAX_RISKY`] (their nesting blows up
/// exponentially until a fix on another branch is merged).
pub struct Gen<'r> {
    r: &'r mut Rng,
    risky: u32,
    /// Small IN lists and no constructs known to compile slowly.
    pub jit: bool,
}

impl<'r> Gen<'r> {
    /// How deep NULLIF, BETWEEN and simple CASE may nest.
    pub const MAX_RISKY: u32 = 6;

    /// A generator drawing from `r`.
    pub fn new(r: &'r mut Rng, jit: bool) -> Gen<'r> {
        Gen { r, risky: 0, jit }
    }

    fn risky<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> Option<T> {
        if self.risky >= Self::MAX_RISKY {
            return None;
        }
        self.risky += 1;
        let out = f(self);
        self.risky -= 1;
        Some(out)
    }

    fn chance(&mut self, p: f64) -> bool {
        self.r.chance(p)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.r.below(n)
    }

    fn num_literal(&mut self) -> String {
        if self.chance(0.5) {
            format!("{}", self.below(21) as i64 - 10)
        } else {
            pick(self.r, NUM_LITERALS).to_string()
        }
    }

    /// A numeric expression.
    pub fn num(&mut self, depth: u32) -> String {
        if depth == 0 || self.chance(0.3) {
            return if self.chance(0.7) {
                pick(self.r, NUMERIC).to_string()
            } else {
                self.num_literal()
            };
        }
        let d = depth - 1;
        match self.below(16) {
            0..=3 => {
                let op = ["+", "-", "*", "/", "%"][self.below(5) as usize];
                format!("({} {op} {})", self.num(d), self.num(d))
            }
            4 => format!("-({})", self.num(d)),
            5 => format!("abs({})", self.num(d)),
            6 => {
                let mut s = String::from("CASE");
                for _ in 0..1 + self.below(3) {
                    s += &format!(" WHEN {} THEN {}", self.boolean(d), self.num(d));
                }
                if self.chance(0.7) {
                    s += &format!(" ELSE {}", self.num(d));
                }
                s + " END"
            }
            7 => self
                .risky(|g| {
                    let mut s = format!("CASE {}", g.num(d));
                    for _ in 0..1 + g.below(3) {
                        s += &format!(" WHEN {} THEN {}", g.num(d), g.num(d));
                    }
                    if g.chance(0.5) {
                        s += &format!(" ELSE {}", g.num(d));
                    }
                    s + " END"
                })
                .unwrap_or_else(|| self.num(0)),
            8 => {
                let n = 2 + self.below(2);
                let args: Vec<String> = (0..n).map(|_| self.num(d)).collect();
                format!("COALESCE({})", args.join(", "))
            }
            9 => self
                .risky(|g| format!("NULLIF({}, {})", g.num(d), g.num(d)))
                .unwrap_or_else(|| self.num(0)),
            10 => {
                let t = pick(self.r, &TYPES[..10]);
                if self.chance(0.5) {
                    format!("CAST({} AS {t})", self.num(d))
                } else {
                    format!("({})::{t}", self.num(d))
                }
            }
            11 => format!("length({})", self.string(d)),
            12 => format!("({} - {})", self.date(d), self.date(d)),
            13 => format!("CAST({} AS INTEGER)", self.boolean(d)),
            14 => format!(
                "{}({})",
                pick(self.r, &["ceil", "floor", "sqrt", "round"]),
                self.num(d)
            ),
            _ => format!("({})", self.num(d)),
        }
    }

    /// A BOOLEAN expression.
    pub fn boolean(&mut self, depth: u32) -> String {
        if depth == 0 || self.chance(0.2) {
            return match self.below(8) {
                0 => "flag".into(),
                1 => pick(self.r, &["TRUE", "FALSE", "NULL"]).into(),
                2 => format!("s LIKE '{}'", pick(self.r, PATTERNS)),
                3 => format!("d >= {}", pick(self.r, DATES)),
                4 => "ts < d".into(),
                _ => format!("{} > {}", pick(self.r, NUMERIC), self.num_literal()),
            };
        }
        let d = depth - 1;
        match self.below(18) {
            0..=2 => {
                let op = ["=", "<>", "!=", "<", "<=", ">", ">="][self.below(7) as usize];
                format!("{} {op} {}", self.num(d), self.num(d))
            }
            3 => format!("({} AND {})", self.boolean(d), self.boolean(d)),
            4 => format!("({} OR {})", self.boolean(d), self.boolean(d)),
            5 => format!("NOT ({})", self.boolean(d)),
            6 => {
                let x = match self.below(5) {
                    0 => self.num(d),
                    1 => self.string(d),
                    2 => self.date(d),
                    3 => self.timestamp(d),
                    _ => self.boolean(d),
                };
                let not = if self.chance(0.5) { " NOT" } else { "" };
                format!("({x}) IS{not} NULL")
            }
            7 => {
                let is = ["IS TRUE", "IS NOT TRUE", "IS FALSE", "IS NOT FALSE"];
                format!("({}) {}", self.boolean(d), is[self.below(4) as usize])
            }
            8 => {
                let n = if !self.jit && self.chance(0.05) {
                    50 + self.below(500)
                } else {
                    1 + self.below(6)
                };
                let mut list: Vec<String> = (0..n).map(|_| self.num_literal()).collect();
                if self.chance(0.2) {
                    list.push(self.num(d));
                }
                let not = if self.chance(0.3) { " NOT" } else { "" };
                format!("{}{not} IN ({})", self.num(d), list.join(", "))
            }
            9 => {
                let n = 1 + self.below(5);
                let mut list: Vec<String> = (0..n)
                    .map(|_| format!("'{}'", pick(self.r, WORDS)))
                    .collect();
                if self.chance(0.2) {
                    list.push("NULL".into());
                }
                let not = if self.chance(0.3) { " NOT" } else { "" };
                format!("{}{not} IN ({})", self.string(d), list.join(", "))
            }
            10 => self
                .risky(|g| {
                    let not = if g.chance(0.2) { " NOT" } else { "" };
                    let sym = if g.chance(0.1) { " SYMMETRIC" } else { "" };
                    format!(
                        "{}{not} BETWEEN{sym} {} AND {}",
                        g.num(d),
                        g.num_literal(),
                        g.num(d)
                    )
                })
                .unwrap_or_else(|| self.boolean(0)),
            11 => {
                let op = ["LIKE", "ILIKE", "NOT LIKE", "NOT ILIKE"][self.below(4) as usize];
                format!("{} {op} '{}'", self.string(d), pick(self.r, PATTERNS))
            }
            12 => {
                let op = ["=", "<>", "<", ">="][self.below(4) as usize];
                format!("{} {op} {}", self.string(d), self.string(d))
            }
            13 => {
                let op = ["=", "<", ">=", "<>"][self.below(4) as usize];
                if self.chance(0.5) {
                    format!("{} {op} {}", self.date(d), self.date(d))
                } else {
                    format!("{} {op} {}", self.timestamp(d), self.date(d))
                }
            }
            14 => {
                let not = if self.chance(0.5) { " NOT" } else { "" };
                format!("{} IS{not} DISTINCT FROM {}", self.num(d), self.num(d))
            }
            15 => format!(
                "CASE WHEN {} THEN {} ELSE {} END",
                self.boolean(d),
                self.boolean(d),
                self.boolean(d)
            ),
            16 => format!("CAST({} AS BOOLEAN)", self.num(d)),
            _ => format!("({}) = ({})", self.boolean(d), self.boolean(d)),
        }
    }

    /// A VARCHAR expression.
    pub fn string(&mut self, depth: u32) -> String {
        if depth == 0 || self.chance(0.5) {
            return if self.chance(0.7) {
                "s".into()
            } else {
                format!("'{}'", pick(self.r, WORDS))
            };
        }
        let d = depth - 1;
        match self.below(6) {
            0 => format!(
                "CASE WHEN {} THEN {} ELSE {} END",
                self.boolean(d),
                self.string(d),
                self.string(d)
            ),
            1 => format!("COALESCE({}, '{}')", self.string(d), pick(self.r, WORDS)),
            2 => self
                .risky(|g| format!("NULLIF({}, '{}')", g.string(d), pick(g.r, WORDS)))
                .unwrap_or_else(|| "s".into()),
            3 => format!("CAST({} AS VARCHAR)", self.num_literal()),
            4 => format!(
                "{}({})",
                pick(self.r, &["upper", "lower", "trim", "substr"]),
                self.string(d)
            ),
            _ => "s".into(),
        }
    }

    /// A DATE expression.
    pub fn date(&mut self, depth: u32) -> String {
        if depth == 0 || self.chance(0.6) {
            return if self.chance(0.7) {
                "d".into()
            } else {
                pick(self.r, DATES).into()
            };
        }
        let d = depth - 1;
        match self.below(4) {
            0 => format!("({} + {})", self.date(d), self.below(100) as i64 - 50),
            1 => format!("({} - {})", self.date(d), self.num(0)),
            2 => "CAST(ts AS DATE)".into(),
            _ => format!("COALESCE({}, {})", self.date(d), pick(self.r, DATES)),
        }
    }

    /// A TIMESTAMP expression.
    pub fn timestamp(&mut self, depth: u32) -> String {
        if depth == 0 || self.chance(0.6) {
            return if self.chance(0.7) {
                "ts".into()
            } else {
                pick(self.r, TIMESTAMPS).into()
            };
        }
        match self.below(3) {
            0 => format!("CAST({} AS TIMESTAMP)", self.date(depth - 1)),
            1 => format!(
                "CAST(ts AS {})",
                pick(self.r, &["TIMESTAMP(0)", "TIMESTAMP(9)"])
            ),
            _ => format!("COALESCE(ts, {})", pick(self.r, TIMESTAMPS)),
        }
    }

    /// An expression of any type: a predicate (BOOLEAN) when `predicate`.
    pub fn any(&mut self, depth: u32, predicate: bool) -> String {
        if predicate {
            return self.boolean(depth);
        }
        match self.below(8) {
            0..=3 => self.num(depth),
            4 => self.boolean(depth),
            5 => self.string(depth),
            6 => self.date(depth),
            _ => self.timestamp(depth),
        }
    }
}

/// Tokens for random token soup and insertions.
const TOKENS: &[&str] = &[
    "a",
    "b",
    "i",
    "s",
    "flag",
    "d",
    "ts",
    "u64",
    "t8",
    "nope",
    "\"a\"",
    "\"\"",
    "`s`",
    "(",
    ")",
    ",",
    "+",
    "-",
    "*",
    "/",
    "%",
    "=",
    "<>",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "||",
    "::",
    ".",
    ";",
    "[",
    "]",
    "{",
    "}",
    "?",
    "$1",
    "@",
    "->",
    "^",
    "&",
    "|",
    "~",
    "!",
    "AND",
    "OR",
    "NOT",
    "IS",
    "NULL",
    "TRUE",
    "FALSE",
    "IN",
    "BETWEEN",
    "LIKE",
    "ILIKE",
    "ESCAPE",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "CAST",
    "AS",
    "DISTINCT",
    "FROM",
    "SELECT",
    "EXISTS",
    "INTERVAL",
    "ARRAY",
    "COALESCE",
    "NULLIF",
    "abs",
    "length",
    "DATE",
    "TIMESTAMP",
    "INTEGER",
    "DOUBLE",
    "VARCHAR",
    "TINYINT",
    "UBIGINT",
    "'x'",
    "'",
    "''",
    "'1995-01-01'",
    "'NaN'",
    "0",
    "1",
    "-1",
    "1.5",
    "1e400",
    "9223372036854775808",
    "99999999999999999999999999",
    "0x1F",
    "1_000",
    ".5",
    "5.",
    "é",
    "\u{0}",
    "\u{feff}",
    "\u{1F600}",
    "--",
    "/*",
    "*/",
    "\\",
    "\n",
    "\t",
    "E'\\n'",
    "N'x'",
    "X'FF'",
    "$$x$$",
    "OVER",
    "FILTER",
    "WITHIN",
    "GROUP",
    "COLLATE",
    "AT",
    "TIME",
    "ZONE",
];

/// Random tokens joined by spaces (or not).
pub fn token_soup(r: &mut Rng) -> String {
    let n = 1 + r.below(30);
    let mut s = String::new();
    for _ in 0..n {
        s += pick(r, TOKENS);
        if r.chance(0.8) {
            s.push(' ');
        }
    }
    s
}

/// `text` changed by 1 to 4 character- or token-level edits (on char boundaries).
pub fn mutate(r: &mut Rng, text: &str) -> String {
    let mut c: Vec<char> = text.chars().collect();
    for _ in 0..1 + r.below(4) {
        let len = c.len() as u64;
        let at = r.below(len + 1) as usize;
        match r.below(8) {
            0 | 1 => {
                // delete a range
                let n = (1 + r.below(8)) as usize;
                let end = (at + n).min(c.len());
                c.drain(at..end);
            }
            2 => {
                // duplicate a range
                let n = (1 + r.below(16)) as usize;
                let end = (at + n).min(c.len());
                let dup: Vec<char> = c[at..end].to_vec();
                c.splice(at..at, dup);
            }
            3 | 4 => {
                let t: Vec<char> = format!(" {} ", pick(r, TOKENS)).chars().collect();
                c.splice(at..at, t);
            }
            5 => {
                // replace a character
                if at < c.len() {
                    c[at] = *[
                        '(', ')', '\'', '"', ',', '0', '9', '-', '.', 'e', ' ', '\\', '%', '_',
                        'é', '\u{0}', ':', 'N',
                    ]
                    .get(r.below(18) as usize)
                    .unwrap_or(&' ');
                }
            }
            6 => {
                // swap two ranges' order: move a range elsewhere
                let n = (1 + r.below(10)) as usize;
                let end = (at + n).min(c.len());
                let moved: Vec<char> = c.drain(at..end).collect();
                let to = r.below(c.len() as u64 + 1) as usize;
                c.splice(to..to, moved);
            }
            _ => {
                // truncate
                c.truncate(at);
            }
        }
    }
    c.into_iter().collect()
}

/// Deep and wide shapes: long operator chains, deep parentheses and prefix
/// operators, nested functions, wide AND/OR, IN lists, CASE and COALESCE, long
/// literals and names. NULLIF, BETWEEN and simple CASE nest at most
/// [`Gen::MAX_RISKY`] deep.
pub fn shape(r: &mut Rng) -> String {
    let n = *[3usize, 10, 50, 200, 300, 1000, 3000]
        .get(r.below(7) as usize)
        .unwrap_or(&10);
    let small = n.min(300);
    match r.below(16) {
        0 => {
            let op = [" + ", " - ", " * ", " / ", " % "][r.below(5) as usize];
            let mut s = vec!["i"; n].join(op);
            if r.chance(0.5) {
                s += " > 0";
            }
            s
        }
        1 => format!("{}a{} > 0", "(".repeat(n), ")".repeat(n)),
        2 => format!("{}flag", "NOT ".repeat(n)),
        3 => format!("{}a{}", "-(".repeat(small), ")".repeat(small)),
        4 => format!("{}i{}", "abs(".repeat(small), ")".repeat(small)),
        5 => {
            let t = ["DOUBLE", "BIGINT", "INTEGER"][r.below(3) as usize];
            format!(
                "{}k{}",
                "CAST(".repeat(small),
                format!(" AS {t})").repeat(small)
            )
        }
        6 => {
            let op = [" AND ", " OR "][r.below(2) as usize];
            (0..n)
                .map(|x| format!("{} > {}", NUMERIC[x % NUMERIC.len()], x % 13))
                .collect::<Vec<_>>()
                .join(op)
        }
        7 => {
            let list: Vec<String> = (0..n).map(|x| (x as i64 - 5).to_string()).collect();
            format!("i IN ({})", list.join(", "))
        }
        8 => {
            let whens: String = (0..small)
                .map(|x| format!(" WHEN i = {x} THEN {x}"))
                .collect();
            format!("CASE{whens} ELSE -1 END")
        }
        9 => {
            let args = vec!["j"; small.max(2)].join(", ");
            format!("COALESCE({args}, 0)")
        }
        10 => {
            let depth = small.min(60);
            let mut s = "i".to_string();
            for x in 0..depth {
                s = format!("CASE WHEN j > {x} THEN {s} ELSE {x} END");
            }
            s
        }
        11 => {
            // the risky constructs, nested no deeper than MAX_RISKY
            let depth = 1 + r.below(Gen::MAX_RISKY as u64) as usize;
            let mut s = "i".to_string();
            for x in 0..depth {
                s = match r.below(3) {
                    0 => format!("NULLIF({s}, {x})"),
                    1 => format!("CASE WHEN ({s}) BETWEEN {x} AND 9 THEN i ELSE j END"),
                    _ => format!("CASE {s} WHEN {x} THEN j ELSE i END"),
                };
            }
            s
        }
        12 => format!("s = '{}'", "x".repeat(n * 30)),
        13 => format!("\"{}\" > 1", "c".repeat(n)),
        14 => format!("{}1{}", "(".repeat(n), ")".repeat(n)),
        _ => {
            let mut s = "(i + 1)".to_string();
            for _ in 0..small.min(120) {
                s = format!("({s} * 2 - {s})");
                if s.len() > 8_000 {
                    break;
                }
            }
            s
        }
    }
}
