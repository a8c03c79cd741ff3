//! `labelSelector` and `fieldSelector` parsing and matching, following
//! `k8s.io/apimachinery/pkg/labels/selector.go` and `pkg/fields/selector.go` (samples 116–122).

use serde_json::Value;

#[derive(Clone, Debug, PartialEq)]
enum Op {
    Exists,
    DoesNotExist,
    Equals,
    NotEquals,
    In,
    NotIn,
    GreaterThan,
    LessThan,
}

#[derive(Clone, Debug)]
struct Requirement {
    key: String,
    op: Op,
    values: Vec<String>,
}

/// A parsed label selector.
#[derive(Clone, Debug, Default)]
pub(crate) struct LabelSelector {
    requirements: Vec<Requirement>,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    DoesNotExist, // !
    Equals,       // =
    DoubleEquals, // ==
    NotEquals,    // !=
    Gt,
    Lt,
    OpenPar,
    ClosedPar,
    Comma,
    End,
}

impl Tok {
    fn literal(&self) -> String {
        match self {
            Tok::Ident(s) => s.clone(),
            Tok::DoesNotExist => "!".into(),
            Tok::Equals => "=".into(),
            Tok::DoubleEquals => "==".into(),
            Tok::NotEquals => "!=".into(),
            Tok::Gt => ">".into(),
            Tok::Lt => "<".into(),
            Tok::OpenPar => "(".into(),
            Tok::ClosedPar => ")".into(),
            Tok::Comma => ",".into(),
            Tok::End => "".into(),
        }
    }
}

fn lex(input: &str) -> Vec<Tok> {
    let chars: Vec<char> = input.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    let special = |c: char| "=!(),><".contains(c);
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if special(c) {
            let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
            let (tok, len) = match two.as_str() {
                "==" => (Tok::DoubleEquals, 2),
                "!=" => (Tok::NotEquals, 2),
                _ => (
                    match c {
                        '=' => Tok::Equals,
                        '!' => Tok::DoesNotExist,
                        '(' => Tok::OpenPar,
                        ')' => Tok::ClosedPar,
                        ',' => Tok::Comma,
                        '>' => Tok::Gt,
                        _ => Tok::Lt,
                    },
                    1,
                ),
            };
            toks.push(tok);
            i += len;
        } else {
            let start = i;
            while i < chars.len() && !chars[i].is_whitespace() && !special(chars[i]) {
                i += 1;
            }
            toks.push(Tok::Ident(chars[start..i].iter().collect()));
        }
    }
    toks.push(Tok::End);
    toks
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos.min(self.toks.len() - 1)]
    }
    fn next(&mut self) -> Tok {
        let t = self.peek().clone();
        self.pos += 1;
        t
    }
}

impl LabelSelector {
    pub(super) fn parse(input: &str) -> Result<LabelSelector, String> {
        let mut p = Parser {
            toks: lex(input),
            pos: 0,
        };
        let mut requirements = Vec::new();
        loop {
            match p.peek().clone() {
                Tok::Ident(_) | Tok::DoesNotExist => {
                    let r = parse_requirement(&mut p)
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    requirements.push(r);
                    match p.next() {
                        Tok::End => break,
                        Tok::Comma => {
                            if !matches!(p.peek(), Tok::Ident(_) | Tok::DoesNotExist) {
                                return Err(format!(
                                    "found '{}', expected: identifier after ','",
                                    p.peek().literal()
                                ));
                            }
                        }
                        other => {
                            return Err(format!(
                                "found '{}', expected: ',' or 'end of string'",
                                other.literal()
                            ));
                        }
                    }
                }
                Tok::End => break,
                other => {
                    return Err(format!(
                        "found '{}', expected: !, identifier, or 'end of string'",
                        other.literal()
                    ));
                }
            }
        }
        Ok(LabelSelector { requirements })
    }

    pub(super) fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    pub(super) fn matches(&self, labels: Option<&serde_json::Map<String, Value>>) -> bool {
        self.requirements.iter().all(|r| {
            let value = labels.and_then(|l| l.get(&r.key)).and_then(Value::as_str);
            match r.op {
                Op::Exists => value.is_some(),
                Op::DoesNotExist => value.is_none(),
                Op::Equals | Op::In => value.is_some_and(|v| r.values.iter().any(|x| x == v)),
                Op::NotEquals | Op::NotIn => value.is_none_or(|v| r.values.iter().all(|x| x != v)),
                Op::GreaterThan | Op::LessThan => {
                    let (Some(v), Some(bound)) =
                        (value.and_then(|v| v.parse::<i64>().ok()), r.values.first())
                    else {
                        return false;
                    };
                    let bound: i64 = bound.parse().unwrap_or(0);
                    if r.op == Op::GreaterThan {
                        v > bound
                    } else {
                        v < bound
                    }
                }
            }
        })
    }
}

fn parse_requirement(p: &mut Parser) -> Result<Requirement, String> {
    let mut op = None;
    let mut tok = p.next();
    if tok == Tok::DoesNotExist {
        op = Some(Op::DoesNotExist);
        tok = p.next();
    }
    let Tok::Ident(key) = tok else {
        return Err(format!("found '{}', expected: identifier", tok.literal()));
    };
    if matches!(p.peek(), Tok::End | Tok::Comma) {
        return Ok(Requirement {
            key,
            op: op.unwrap_or(Op::Exists),
            values: vec![],
        });
    }
    if op.is_some() {
        return Ok(Requirement {
            key,
            op: Op::DoesNotExist,
            values: vec![],
        });
    }
    let op = match p.next() {
        Tok::Equals | Tok::DoubleEquals => Op::Equals,
        Tok::NotEquals => Op::NotEquals,
        Tok::Gt => Op::GreaterThan,
        Tok::Lt => Op::LessThan,
        Tok::Ident(w) if w == "in" => Op::In,
        Tok::Ident(w) if w == "notin" => Op::NotIn,
        other => {
            return Err(format!(
                "found '{}', expected: in, notin, =, ==, !=, gt, lt",
                other.literal()
            ));
        }
    };
    let values = match op {
        Op::In | Op::NotIn => parse_values(p)?,
        _ => match p.peek().clone() {
            Tok::End | Tok::Comma => vec![String::new()],
            Tok::Ident(v) => {
                p.next();
                vec![v]
            }
            other => return Err(format!("found '{}', expected: identifier", other.literal())),
        },
    };
    Ok(Requirement { key, op, values })
}

fn parse_values(p: &mut Parser) -> Result<Vec<String>, String> {
    let open = p.next();
    if open != Tok::OpenPar {
        return Err(format!("found '{}' expected: '('", open.literal()));
    }
    let mut values = Vec::new();
    loop {
        match p.next() {
            Tok::Ident(v) => values.push(v),
            Tok::Comma => {}
            Tok::ClosedPar => return Ok(values),
            other => {
                return Err(format!(
                    "found '{}', expected: ',', ')' or identifier",
                    other.literal()
                ));
            }
        }
    }
}

/// One `fieldSelector` term.
#[derive(Clone, Debug)]
struct FieldTerm {
    field: String,
    negated: bool,
    value: String,
}

/// A parsed field selector; only `metadata.name` and `metadata.namespace` are supported, as for
/// ConfigMaps, Leases and custom resources (sample 121).
#[derive(Clone, Debug, Default)]
pub(crate) struct FieldSelector {
    terms: Vec<FieldTerm>,
}

fn split_terms(input: &str) -> Vec<String> {
    let mut terms = vec![String::new()];
    let mut escaped = false;
    for c in input.chars() {
        if escaped {
            terms.last_mut().expect("term").push(c);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == ',' {
            terms.push(String::new());
        } else {
            terms.last_mut().expect("term").push(c);
        }
    }
    terms
}

impl FieldSelector {
    pub(super) fn parse(input: &str, allowed: &[&str]) -> Result<FieldSelector, String> {
        let mut terms = Vec::new();
        if input.trim().is_empty() {
            return Ok(FieldSelector::default());
        }
        for term in split_terms(input) {
            let (field, negated, value) = if let Some((f, v)) = term.split_once("!=") {
                (f, true, v)
            } else if let Some((f, v)) = term.split_once("==") {
                (f, false, v)
            } else if let Some((f, v)) = term.split_once('=') {
                (f, false, v)
            } else {
                return Err(format!(
                    "invalid selector: '{input}'; can't understand '{term}'"
                ));
            };
            let field = field.trim().to_string();
            if !allowed.contains(&field.as_str()) {
                let list: Vec<String> = allowed.iter().map(|a| format!("\"{a}\"")).collect();
                return Err(format!(
                    "\"{field}\" is not a known field selector: only {}",
                    list.join(", ")
                ));
            }
            terms.push(FieldTerm {
                field,
                negated,
                value: value.to_string(),
            });
        }
        Ok(FieldSelector { terms })
    }

    pub(super) fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// `metadata.name=X` as the only constraint on the name: the list becomes a single-key read.
    pub(super) fn single_name(&self) -> Option<&str> {
        let names: Vec<&FieldTerm> = self
            .terms
            .iter()
            .filter(|t| t.field == "metadata.name")
            .collect();
        match names.as_slice() {
            [t] if !t.negated => Some(&t.value),
            _ => None,
        }
    }

    pub(super) fn matches(&self, obj: &Value) -> bool {
        self.terms.iter().all(|t| {
            let pointer = format!("/{}", t.field.replace('.', "/"));
            let actual = match obj.pointer(&pointer) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Bool(b)) => b.to_string(),
                Some(Value::Number(n)) => n.to_string(),
                _ if t.field == "spec.unschedulable" => "false".to_string(),
                _ => String::new(),
            };
            (actual == t.value) != t.negated
        })
    }
}

/// The name a `fieldSelector` pins down, as `RequestInfo` uses it for authorization.
pub(crate) fn exact_name(selector: &str) -> Option<String> {
    FieldSelector::parse(selector, &["metadata.name", "metadata.namespace"])
        .ok()
        .and_then(|s| s.single_name().map(str::to_string))
}
