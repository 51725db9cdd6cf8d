//! Building the program: the [`Lowerer`]'s nodes (equal ones shared), input slots,
//! parameters and helper states, the inputs the interpreter computes for the kernel,
//! and undoing what a failed subtree added.

use std::any::Any;

use arrow_schema::DataType;
use broadhead_codegen::{
    ByteLayout, Helper, InputSpec, Node, NodeId, PType, QuickCheck, QuickTest,
};

use super::{Interpreted, Lowerer, MAX_JIT_NODES};
use crate::layout::quick_params;
use crate::typed::{TypedExpr, TypedKind};

/// Whether the kernel reads an input of type `data_type` as `ty` from 16-byte
/// values: a `Decimal128` of at most [`DECIMAL_I64_DIGITS`] digits is computed as
/// an `i64` but read in place, the low halves of its values (a value that does not
/// fit is an error).
fn stored_as_i128(data_type: &DataType, ty: PType) -> bool {
    ty == PType::I64 && matches!(data_type, DataType::Decimal128(..))
}

/// How much a [`Lowerer`] held at some point, to undo what a failed subtree added.
pub(super) struct Mark {
    nodes: usize,
    inputs: usize,
    params: usize,
    states: usize,
    interpreted: usize,
}

/// Whether the interpreter may evaluate `e` over every row for the kernel: it cannot
/// raise an error (nor refers to a shared value) and is not a literal.
fn interpretable(e: &TypedExpr) -> bool {
    !e.can_error() && !matches!(e.kind, TypedKind::Literal(_))
}

impl Lowerer {
    pub(super) fn add(&mut self, node: Node) -> NodeId {
        if let Some(&id) = self.index.get(&node) {
            return id;
        }
        let id = self.nodes.len();
        self.nodes.push(node.clone());
        self.index.insert(node, id);
        id
    }

    /// The input slot of column `column`, read as `ty`.
    pub(super) fn slot(&mut self, column: usize, ty: PType) -> usize {
        match self.columns.iter().position(|&c| c == Some(column)) {
            Some(s) => s,
            None => {
                let layout = match ty {
                    PType::Str => self.layouts.get(column).copied().unwrap_or_default(),
                    _ => ByteLayout::Offsets32,
                };
                self.columns.push(Some(column));
                self.inputs.push(InputSpec {
                    layout,
                    stored_as_i128: self
                        .stored
                        .get(column)
                        .is_some_and(|t| stored_as_i128(t, ty)),
                    ..InputSpec::new(ty)
                });
                self.columns.len() - 1
            }
        }
    }

    /// A literal as a parameter, or a NaN as a constant: the back end takes float
    /// parameters to be numbers, and leaves their NaN tests out of comparisons.
    pub(super) fn param(&mut self, ty: PType, bits: u64) -> NodeId {
        let nan = match ty {
            PType::F64 => f64::from_bits(bits).is_nan(),
            PType::F32 => f32::from_bits(bits as u32).is_nan(),
            _ => false,
        };
        if nan {
            return self.add(Node::Const(ty, bits));
        }
        let slot = self.param_slot(ty, bits);
        self.add(Node::Param(slot))
    }

    /// The parameter slot of a value (equal values share one).
    fn param_slot(&mut self, ty: PType, bits: u64) -> usize {
        match self.param_slots.get(&(ty, bits)) {
            Some(&slot) => slot,
            None => {
                self.params.push(ty);
                self.values.push(bits);
                let slot = self.params.len() - 1;
                self.param_slots.insert((ty, bits), slot);
                slot
            }
        }
    }

    pub(super) fn state<T: Any + Send + Sync>(&mut self, state: T) -> usize {
        let boxed = Box::new(state);
        let addr = &*boxed as *const T as u64;
        self.states.push(boxed);
        self.params.push(PType::Ptr);
        self.values.push(addr);
        self.params.len() - 1
    }

    /// A helper call; helpers with equal states (by `key`) share one state, so equal
    /// calls become one node.
    pub(super) fn helper<T: Any + Send + Sync>(
        &mut self,
        helper: Helper,
        key: String,
        state: T,
        args: Vec<usize>,
        out: PType,
    ) -> NodeId {
        self.helper_deciding(helper, key, state, args, out, None)
    }

    /// A predicate helper on one string column, with what a row's length and first
    /// bytes decide of it (`test` against `literal`) checked in the kernel first.
    pub(super) fn deciding_helper<T: Any + Send + Sync>(
        &mut self,
        helper: Helper,
        key: String,
        state: T,
        slot: usize,
        test: QuickTest,
        literal: &[u8],
    ) -> NodeId {
        let [a, b] = quick_params(test, literal);
        let params = [
            self.param_slot(PType::I64, a),
            self.param_slot(PType::I64, b),
        ];
        let quick = Some(QuickCheck { test, params });
        self.helper_deciding(helper, key, state, vec![slot], PType::Bool, quick)
    }

    fn helper_deciding<T: Any + Send + Sync>(
        &mut self,
        helper: Helper,
        key: String,
        state: T,
        args: Vec<usize>,
        out: PType,
        quick: Option<QuickCheck>,
    ) -> NodeId {
        let state = match self.state_slots.get(&(helper.name, key.clone())) {
            Some(&slot) => slot,
            None => {
                let slot = self.state(state);
                self.state_slots.insert((helper.name, key), slot);
                slot
            }
        };
        self.add(Node::Helper {
            helper,
            state,
            args,
            out,
            quick,
        })
    }

    /// A string (or BLOB) literal: a `Str` parameter pointing at its address and
    /// length.
    pub(super) fn string_literal(&mut self, text: &[u8]) -> NodeId {
        let key = ("string literal", format!("{text:?}"));
        self.pointer_param(key, PType::Str, || {
            let bytes: Box<[u8]> = text.into();
            let view = Box::new([bytes.as_ptr() as u64, bytes.len() as u64]);
            let addr = &*view as *const [u64; 2] as u64;
            (vec![Box::new(bytes), view], addr)
        })
    }

    /// A 128-bit literal: an `I128` parameter pointing at its value (equal values share
    /// one).
    pub(super) fn wide_param(&mut self, value: i128) -> NodeId {
        let key = ("128-bit literal", value.to_string());
        self.pointer_param(key, PType::I128, || {
            let boxed = Box::new(value);
            let addr = &*boxed as *const i128 as u64;
            (vec![boxed], addr)
        })
    }

    /// A parameter of type `ty` holding the address `make` gives with the states that
    /// own what it points at (kept as long as the program); one per `key`.
    fn pointer_param(
        &mut self,
        key: (&'static str, String),
        ty: PType,
        make: impl FnOnce() -> (Vec<Box<dyn Any + Send + Sync>>, u64),
    ) -> NodeId {
        let slot = match self.state_slots.get(&key) {
            Some(&slot) => slot,
            None => {
                let (owned, addr) = make();
                self.states.extend(owned);
                self.params.push(ty);
                self.values.push(addr);
                let slot = self.params.len() - 1;
                self.state_slots.insert(key, slot);
                slot
            }
        };
        self.add(Node::Param(slot))
    }

    /// Whether `e` may become an interpreted input: [`interpretable`], and fewer
    /// interpreted inputs than a kernel may have nodes (beyond, the expression is
    /// too large to compile anyway, and finding repeats would cost quadratic time).
    pub(super) fn may_interpret(&self, e: &TypedExpr) -> bool {
        self.interpreted.len() < MAX_JIT_NODES && interpretable(e)
    }

    /// The input slot of `e` evaluated by the interpreter (one per distinct subtree).
    pub(super) fn interpreted_slot(&mut self, e: &TypedExpr, ty: PType, reason: &str) -> usize {
        if let Some(i) = self.interpreted.iter().find(|i| i.expr == *e) {
            return i.slot;
        }
        self.columns.push(None);
        self.inputs.push(InputSpec {
            stored_as_i128: stored_as_i128(&e.data_type, ty),
            ..InputSpec::new(ty)
        });
        let slot = self.columns.len() - 1;
        self.interpreted.push(Interpreted {
            slot,
            expr: e.clone(),
            reason: reason.to_string(),
        });
        slot
    }

    pub(super) fn mark(&self) -> Mark {
        Mark {
            nodes: self.nodes.len(),
            inputs: self.inputs.len(),
            params: self.params.len(),
            states: self.states.len(),
            interpreted: self.interpreted.len(),
        }
    }

    /// Forgets what was added since `m` (in time proportional to what was added, but
    /// for the parameter maps, which are scanned only when parameters were added).
    pub(super) fn undo(&mut self, m: Mark) {
        for node in self.nodes.drain(m.nodes..) {
            self.index.remove(&node);
        }
        self.columns.truncate(m.inputs);
        self.inputs.truncate(m.inputs);
        if self.params.len() > m.params {
            self.params.truncate(m.params);
            self.values.truncate(m.params);
            self.param_slots.retain(|_, slot| *slot < m.params);
            self.state_slots.retain(|_, slot| *slot < m.params);
        }
        self.states.truncate(m.states);
        self.interpreted.truncate(m.interpreted);
    }
}
