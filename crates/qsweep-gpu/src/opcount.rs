//! Arithmetic operations per customer of a kernel, counted from its WGSL.
//!
//! `qsweep bench` divides customers/s × operations per customer by the
//! adapter's measured peak (`shaders/peak.wgsl`, or the CPU twin in
//! `engine::cpu`) to say how much headroom a kernel leaves. The count is
//! static, over naga's IR of the pipeline actually compiled for the point:
//!
//! - every arithmetic expression (binary, unary, select, conversion,
//!   relational and math builtins) counts one per vector component; a
//!   multiply-add counts two, as in the peak kernel, and a transcendental
//!   counts one (GPUs issue it as one special-function instruction);
//! - conditions that depend only on constants and on the point's parameters
//!   are evaluated (the sampler chosen for the law, the heap's depth);
//! - a loop runs as many times as its bound evaluates to, once otherwise
//!   (rejection samplers: their acceptance is above 95%);
//! - a branch on run-time data counts its costlier side, except an equality
//!   test, which guards periodic work (the recorder's block flush every 256
//!   customers, the heap's rebase) and counts as not taken.
//!
//! So it is an estimate of the steady-state work of one customer, good to
//! tens of percent: enough to tell a kernel at 2% of peak from one at 60%.

use naga::{
    BinaryOperator, Block, Expression, Function, Handle, Literal, MathFunction, Module, Statement,
    TypeInner, UnaryOperator,
};

use qsweep_core::contract::{Kernel, Law, PointParams};

/// A value the counter could work out, or `Unknown`.
#[derive(Clone, Debug, PartialEq)]
enum Value {
    Num(f64),
    Bool(bool),
    Struct(Vec<Value>),
    Unknown,
}

fn law_value(l: &Law) -> Value {
    let n = |x: u32| Value::Num(f64::from(x));
    let f = |x: f32| Value::Num(f64::from(x));
    // Field for field as `struct Law` in shaders/common.wgsl.
    Value::Struct(vec![
        n(l.kind),
        n(l.n),
        n(l.offset),
        n(0),
        Value::Unknown,
        f(l.scale),
        f(l.lo),
        f(l.hi),
        f(0.0),
    ])
}

fn point_value(p: &PointParams) -> Value {
    let n = |x: u32| Value::Num(f64::from(x));
    // Field for field as `struct PointParams` in shaders/common.wgsl.
    Value::Struct(vec![
        law_value(&p.arrival),
        law_value(&p.service),
        n(p.kernel),
        n(p.thinning),
        n(p.servers),
        n(p.route_n),
        n(p.customers),
        n(p.warmup),
        n(p.seed_lo),
        n(p.seed_hi),
        n(p.point_index),
        Value::Num(f64::from(p.inv_hist_scale)),
        n(p.choices),
        n(p.routers),
        Value::Num(f64::from(p.ln_keep)),
        n(0),
        n(0),
        n(0),
    ])
}

/// Estimated arithmetic operations per customer of `p`'s pipeline, given
/// its WGSL source; `None` for the event-driven dispatch kernel (its work
/// per customer depends on the routing state) or if the source does not
/// have the expected shape.
pub fn ops_per_customer(source: &str, p: &PointParams) -> Option<f64> {
    if p.kernel() == Kernel::Dispatch {
        return None;
    }
    let module = naga::front::wgsl::parse_str(source).ok()?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .ok()?;
    let counter = Counter {
        module: &module,
        info: &info,
    };
    let (simulate, f) = module
        .functions
        .iter()
        .find(|(_, f)| f.name.as_deref() == Some("simulate"))?;
    let args = vec![
        point_value(p),
        Value::Unknown,
        Value::Unknown,
        Value::Unknown,
    ];
    // The customer loop is `simulate`'s own, or that of the function it
    // calls to run its customers (the central queue's `run_customers`,
    // called once per heap placement: the first call, with its arguments
    // as `simulate` passes them).
    let (f, args) = match counter.customer_loop(&f.body) {
        Some(_) => (simulate, args),
        None => counter.loop_call(simulate, &f.body, &args)?,
    };
    let (body, continuing) = counter.customer_loop(&counter.function(f).body)?;
    Some(counter.block(f, body, &args).0 + counter.block(f, continuing, &args).0)
}

struct Counter<'a> {
    module: &'a Module,
    info: &'a naga::valid::ModuleInfo,
}

impl Counter<'_> {
    fn function(&self, h: Handle<Function>) -> &Function {
        &self.module.functions[h]
    }

    /// The last innermost loop of `block` whose body records a customer:
    /// the customer loop of `simulate`.
    fn customer_loop<'b>(&self, block: &'b Block) -> Option<(&'b Block, &'b Block)> {
        let mut found = None;
        for s in block.iter() {
            match s {
                // The innermost such loop: the one-server kernel runs its
                // customers in a loop per segment.
                Statement::Loop {
                    body, continuing, ..
                } if self.calls(body, "rec_record") => {
                    found = self.customer_loop(body).or(Some((body, continuing)))
                }
                Statement::Block(b) => found = self.customer_loop(b).or(found),
                Statement::If { accept, reject, .. } => {
                    found = self
                        .customer_loop(accept)
                        .or(self.customer_loop(reject))
                        .or(found)
                }
                _ => {}
            }
        }
        found
    }

    /// The first function `block` (of `f`, called with `args`) calls that
    /// has a customer loop, with the arguments it is called with.
    fn loop_call(
        &self,
        f: Handle<Function>,
        block: &Block,
        args: &[Value],
    ) -> Option<(Handle<Function>, Vec<Value>)> {
        let func = self.function(f);
        block.iter().find_map(|s| match s {
            Statement::Call {
                function,
                arguments,
                ..
            } if self.customer_loop(&self.function(*function).body).is_some() => Some((
                *function,
                arguments
                    .iter()
                    .map(|&a| self.eval(func, a, args))
                    .collect(),
            )),
            Statement::Block(b) => self.loop_call(f, b, args),
            Statement::If { accept, reject, .. } => self
                .loop_call(f, accept, args)
                .or_else(|| self.loop_call(f, reject, args)),
            _ => None,
        })
    }

    /// Whether `block` calls the function `name`, directly or not.
    fn calls(&self, block: &Block, name: &str) -> bool {
        block.iter().any(|s| match s {
            Statement::Call { function, .. } => {
                let f = self.function(*function);
                f.name.as_deref() == Some(name) || self.calls(&f.body, name)
            }
            Statement::Block(b) => self.calls(b, name),
            Statement::If { accept, reject, .. } => {
                self.calls(accept, name) || self.calls(reject, name)
            }
            Statement::Loop {
                body, continuing, ..
            } => self.calls(body, name) || self.calls(continuing, name),
            Statement::Switch { cases, .. } => cases.iter().any(|c| self.calls(&c.body, name)),
            _ => false,
        })
    }

    /// Operations of `block` in function `f` with arguments `args`, and
    /// whether it certainly returns.
    fn block(&self, f: Handle<Function>, block: &Block, args: &[Value]) -> (f64, bool) {
        let func = self.function(f);
        let mut ops = 0.0;
        for s in block.iter() {
            match s {
                Statement::Emit(range) => {
                    ops += range
                        .clone()
                        .map(|h| self.expression_ops(f, h))
                        .sum::<f64>();
                }
                Statement::Block(b) => {
                    let (o, ret) = self.block(f, b, args);
                    ops += o;
                    if ret {
                        return (ops, true);
                    }
                }
                Statement::If {
                    condition,
                    accept,
                    reject,
                } => {
                    let (o, ret) = match self.eval(func, *condition, args) {
                        Value::Bool(true) => self.block(f, accept, args),
                        Value::Bool(false) => self.block(f, reject, args),
                        _ if self.is_equality(func, *condition) => self.block(f, reject, args),
                        _ => {
                            let (a, ra) = self.block(f, accept, args);
                            let (r, rr) = self.block(f, reject, args);
                            (a.max(r), ra && rr)
                        }
                    };
                    ops += o;
                    if ret {
                        return (ops, true);
                    }
                }
                Statement::Switch { cases, .. } => {
                    ops += cases
                        .iter()
                        .map(|c| self.block(f, &c.body, args).0)
                        .fold(0.0, f64::max);
                }
                Statement::Loop {
                    body, continuing, ..
                } => {
                    let trips = self.trips(func, body, args);
                    ops +=
                        trips * (self.block(f, body, args).0 + self.block(f, continuing, args).0);
                }
                Statement::Call {
                    function,
                    arguments,
                    ..
                } => {
                    let bound: Vec<Value> = arguments
                        .iter()
                        .map(|&a| self.eval(func, a, args))
                        .collect();
                    ops += self
                        .block(*function, &self.function(*function).body, &bound)
                        .0;
                }
                Statement::Atomic { .. } => ops += 1.0,
                Statement::Return { .. } => return (ops, true),
                _ => {}
            }
        }
        (ops, false)
    }

    /// Iterations of a loop whose body starts as naga lowers `for (...; i <
    /// bound; ...)`: `if (i < bound) {} else { break; }`; 1 if the bound is
    /// not known or the loop can leave early (a rejection sampler).
    fn trips(&self, func: &Function, body: &Block, args: &[Value]) -> f64 {
        for (k, s) in body.iter().enumerate() {
            match s {
                Statement::Emit(_) => continue,
                Statement::If {
                    condition, reject, ..
                } if matches!(reject.first(), Some(Statement::Break)) => {
                    if body.iter().skip(k + 1).any(breaks) {
                        return 1.0;
                    }
                    if let Expression::Binary {
                        op: BinaryOperator::Less,
                        right,
                        ..
                    } = func.expressions[*condition]
                    {
                        if let Value::Num(n) = self.eval(func, right, args) {
                            return n.max(0.0);
                        }
                    }
                    return 1.0;
                }
                _ => return 1.0,
            }
        }
        1.0
    }

    fn is_equality(&self, func: &Function, h: Handle<Expression>) -> bool {
        matches!(
            func.expressions[h],
            Expression::Binary {
                op: BinaryOperator::Equal,
                ..
            }
        )
    }

    /// Components of an expression's result (1 for scalars).
    fn components(&self, f: Handle<Function>, h: Handle<Expression>) -> f64 {
        match self.info[f][h].ty.inner_with(&self.module.types) {
            TypeInner::Vector { size, .. } => f64::from(*size as u8),
            _ => 1.0,
        }
    }

    fn expression_ops(&self, f: Handle<Function>, h: Handle<Expression>) -> f64 {
        match self.function(f).expressions[h] {
            Expression::Binary { .. }
            | Expression::Unary { .. }
            | Expression::Select { .. }
            | Expression::As { .. }
            | Expression::Relational { .. }
            | Expression::Math { .. } => self.components(f, h),
            _ => 0.0,
        }
    }

    /// The value of an expression where constants and the arguments decide it.
    fn eval(&self, func: &Function, h: Handle<Expression>, args: &[Value]) -> Value {
        use Value::*;
        match &func.expressions[h] {
            Expression::Literal(l) => literal(l),
            Expression::Constant(c) => {
                match &self.module.global_expressions[self.module.constants[*c].init] {
                    Expression::Literal(l) => literal(l),
                    _ => Unknown,
                }
            }
            Expression::FunctionArgument(i) => args.get(*i as usize).cloned().unwrap_or(Unknown),
            Expression::AccessIndex { base, index } => match self.eval(func, *base, args) {
                Struct(fields) => fields.get(*index as usize).cloned().unwrap_or(Unknown),
                _ => Unknown,
            },
            Expression::As { expr, .. } => self.eval(func, *expr, args),
            Expression::Unary {
                op: UnaryOperator::LogicalNot,
                expr,
            } => match self.eval(func, *expr, args) {
                Bool(b) => Bool(!b),
                _ => Unknown,
            },
            Expression::Binary { op, left, right } => binary(
                *op,
                self.eval(func, *left, args),
                self.eval(func, *right, args),
            ),
            Expression::Math { fun, arg, arg1, .. } => {
                let a = self.eval(func, *arg, args);
                let b = arg1.map_or(Unknown, |b| self.eval(func, b, args));
                match (fun, a, b) {
                    (MathFunction::Max, Num(a), Num(b)) => Num(a.max(b)),
                    (MathFunction::Min, Num(a), Num(b)) => Num(a.min(b)),
                    (MathFunction::FirstLeadingBit, Num(a), _) if a >= 1.0 => Num(a.log2().floor()),
                    _ => Unknown,
                }
            }
            _ => Unknown,
        }
    }
}

/// Whether a statement can leave its enclosing loop (a `break` outside any
/// inner loop).
fn breaks(s: &Statement) -> bool {
    match s {
        Statement::Break => true,
        Statement::Block(b) => b.iter().any(breaks),
        Statement::If { accept, reject, .. } => {
            accept.iter().any(breaks) || reject.iter().any(breaks)
        }
        _ => false,
    }
}

fn literal(l: &Literal) -> Value {
    match *l {
        Literal::U32(x) => Value::Num(f64::from(x)),
        Literal::I32(x) => Value::Num(f64::from(x)),
        Literal::F32(x) => Value::Num(f64::from(x)),
        Literal::AbstractInt(x) => Value::Num(x as f64),
        Literal::Bool(b) => Value::Bool(b),
        _ => Value::Unknown,
    }
}

fn binary(op: BinaryOperator, a: Value, b: Value) -> Value {
    use BinaryOperator as B;
    use Value::*;
    match (op, a, b) {
        (B::LogicalAnd, Bool(false), _) | (B::LogicalAnd, _, Bool(false)) => Bool(false),
        (B::LogicalOr, Bool(true), _) | (B::LogicalOr, _, Bool(true)) => Bool(true),
        (B::LogicalAnd, Bool(a), Bool(b)) => Bool(a && b),
        (B::LogicalOr, Bool(a), Bool(b)) => Bool(a || b),
        (B::Equal, Num(a), Num(b)) => Bool(a == b),
        (B::NotEqual, Num(a), Num(b)) => Bool(a != b),
        (B::Less, Num(a), Num(b)) => Bool(a < b),
        (B::LessEqual, Num(a), Num(b)) => Bool(a <= b),
        (B::Greater, Num(a), Num(b)) => Bool(a > b),
        (B::GreaterEqual, Num(a), Num(b)) => Bool(a >= b),
        (B::Add, Num(a), Num(b)) => Num(a + b),
        (B::Subtract, Num(a), Num(b)) => Num(a - b),
        (B::Multiply, Num(a), Num(b)) => Num(a * b),
        _ => Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dispatch_kernel_is_not_estimated() {
        let p = PointParams {
            kernel: Kernel::Dispatch.code(),
            ..PointParams::default()
        };
        assert_eq!(ops_per_customer("", &p), None);
    }
}
