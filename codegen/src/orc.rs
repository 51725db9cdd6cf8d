//! The process's one ORC LLJIT: relocatable object code in, a function address out,
//! and the code freed when its last user drops it.
//!
//! Every kernel's object code is added to the LLJIT's main `JITDylib` under a
//! resource tracker of its own; removing the tracker unlinks the kernel's symbol and
//! frees its memory. A kernel's symbol is derived from its [`KernelKey`](crate::KernelKey),
//! so the same program compiled twice (two threads racing, or a kernel the
//! in-memory cache evicted while a user still holds it, then loaded again from the
//! disk cache) has the same symbol: [`load`] then hands out the code already loaded
//! instead of defining the symbol twice.
//!
//! Helpers the kernels call are defined in the main `JITDylib` as absolute symbols
//! (their addresses in this process) the first time a kernel needs them; C library
//! functions LLVM may call (`memset`, `fmod`, …) are found in the process by a
//! `dlsym` generator.
//!
//! All LLJIT calls happen under one mutex. Adding an object and linking it takes
//! well under a millisecond; compiling (IR, optimization, machine code), the
//! expensive part, happens outside it, in parallel on as many threads as call it.

use std::collections::HashMap;
use std::ffi::{c_void, CStr, CString};
use std::ptr;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};

use crate::llvm_sys::core::LLVMCreateMemoryBufferWithMemoryRangeCopy;
use crate::llvm_sys::error::{
    LLVMConsumeError, LLVMDisposeErrorMessage, LLVMErrorRef, LLVMGetErrorMessage,
};
use crate::llvm_sys::orc2::lljit::{
    LLVMOrcCreateLLJIT, LLVMOrcLLJITAddObjectFileWithRT, LLVMOrcLLJITGetExecutionSession,
    LLVMOrcLLJITGetGlobalPrefix, LLVMOrcLLJITGetMainJITDylib, LLVMOrcLLJITLookup,
    LLVMOrcLLJITMangleAndIntern, LLVMOrcLLJITRef,
};
use inkwell::targets::{InitializationConfig, Target};
// The one name the LLVM 14 and LLVM 15+ C APIs spell differently.
#[cfg(feature = "llvm14")]
use crate::llvm_sys::orc2::LLVMJITCSymbolMapPair as SymbolMapPair;
#[cfg(not(feature = "llvm14"))]
use crate::llvm_sys::orc2::LLVMOrcCSymbolMapPair as SymbolMapPair;
use crate::llvm_sys::orc2::{
    LLVMJITEvaluatedSymbol, LLVMJITSymbolFlags, LLVMJITSymbolGenericFlags, LLVMOrcAbsoluteSymbols,
    LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess, LLVMOrcDisposeMaterializationUnit,
    LLVMOrcExecutionSessionGetSymbolStringPool, LLVMOrcExecutionSessionSetErrorReporter,
    LLVMOrcJITDylibAddGenerator, LLVMOrcJITDylibCreateResourceTracker, LLVMOrcJITDylibDefine,
    LLVMOrcJITDylibRef, LLVMOrcReleaseResourceTracker, LLVMOrcResourceTrackerRef,
    LLVMOrcResourceTrackerRemove, LLVMOrcSymbolStringPoolClearDeadEntries,
};

/// How many kernels are unloaded between sweeps of the symbol string pool (each
/// kernel's symbol is a distinct interned string).
const SWEEP_EVERY: usize = 1024;

/// The LLJIT and what is loaded into it; only touched under [`Jit::state`]'s lock.
struct State {
    lljit: LLVMOrcLLJITRef,
    main: LLVMOrcJITDylibRef,
    /// Loaded kernels by symbol.
    live: HashMap<String, Live>,
    /// Helper symbols defined so far, with their addresses.
    helpers: HashMap<&'static str, usize>,
    /// Distinguishes successive loads of one symbol.
    next_generation: u64,
    /// Kernels unloaded since the last sweep of the string pool.
    unloaded: usize,
}

/// A loaded kernel, as the JIT remembers it.
struct Live {
    code: Weak<Code>,
    tracker: LLVMOrcResourceTrackerRef,
    generation: u64,
}

struct Jit {
    state: Mutex<State>,
}

// SAFETY: the LLJIT, its JITDylib and the resource trackers are LLVM objects without
// thread affinity (ORC is built for multi-threaded use), and every access to them
// goes through the mutex.
unsafe impl Send for Jit {}
// SAFETY: as above: shared access only through the mutex.
unsafe impl Sync for Jit {}

static JIT: OnceLock<Result<Jit, String>> = OnceLock::new();

/// An LLVM error's message (the error is consumed).
fn take_error(err: LLVMErrorRef) -> String {
    // SAFETY: `err` is a live, unconsumed error; getting its message consumes it and
    // the message is disposed of after being copied.
    unsafe {
        let msg = LLVMGetErrorMessage(err);
        let text = CStr::from_ptr(msg).to_string_lossy().into_owned();
        LLVMDisposeErrorMessage(msg);
        text
    }
}

/// Errors ORC cannot hand to a caller (none are expected: every failure of a lookup
/// is returned by the lookup) are dropped rather than printed.
extern "C" fn ignore_error(_ctx: *mut c_void, err: LLVMErrorRef) {
    // SAFETY: ORC passes an error it gives up ownership of.
    unsafe { LLVMConsumeError(err) }
}

fn init() -> Result<Jit, String> {
    Target::initialize_native(&InitializationConfig::default())?;
    let mut lljit = ptr::null_mut();
    // SAFETY: a null builder asks for the default LLJIT for the host (the native
    // target is initialized above); on success `lljit` is a valid LLJIT that this
    // process keeps for its lifetime.
    let err = unsafe { LLVMOrcCreateLLJIT(&mut lljit, ptr::null_mut()) };
    if !err.is_null() {
        return Err(format!("creating the JIT: {}", take_error(err)));
    }
    // SAFETY: `lljit` is valid; the session and main JITDylib live as long as it.
    // The generator is handed to the JITDylib, which owns it from then on.
    let main = unsafe {
        let es = LLVMOrcLLJITGetExecutionSession(lljit);
        LLVMOrcExecutionSessionSetErrorReporter(es, ignore_error, ptr::null_mut());
        let main = LLVMOrcLLJITGetMainJITDylib(lljit);
        let mut generator = ptr::null_mut();
        let err = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
            &mut generator,
            LLVMOrcLLJITGetGlobalPrefix(lljit),
            None,
            ptr::null_mut(),
        );
        if !err.is_null() {
            return Err(format!("process symbols: {}", take_error(err)));
        }
        LLVMOrcJITDylibAddGenerator(main, generator);
        main
    };
    Ok(Jit {
        state: Mutex::new(State {
            lljit,
            main,
            live: HashMap::new(),
            helpers: HashMap::new(),
            next_generation: 0,
            unloaded: 0,
        }),
    })
}

fn jit() -> Result<&'static Jit, String> {
    JIT.get_or_init(init).as_ref().map_err(Clone::clone)
}

/// Initializes LLVM's native target and the JIT, once per process.
pub(crate) fn initialize() -> Result<(), String> {
    jit().map(|_| ())
}

impl Jit {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl State {
    /// Defines `name` as the absolute address `addr`, once.
    fn define_helper(&mut self, name: &'static str, addr: usize) -> Result<(), String> {
        match self.helpers.get(name) {
            Some(&known) if known == addr => return Ok(()),
            Some(_) => return Err(format!("helper {name} has two addresses")),
            None => {}
        }
        let cname = CString::new(name).map_err(|e| e.to_string())?;
        let mut pair = SymbolMapPair {
            // SAFETY: `lljit` is valid; the interned name is retained for the pair,
            // whose ownership passes to the materialization unit below.
            Name: unsafe { LLVMOrcLLJITMangleAndIntern(self.lljit, cname.as_ptr()) },
            Sym: LLVMJITEvaluatedSymbol {
                Address: addr as u64,
                Flags: LLVMJITSymbolFlags {
                    GenericFlags: LLVMJITSymbolGenericFlags::LLVMJITSymbolGenericFlagsExported
                        as u8
                        | LLVMJITSymbolGenericFlags::LLVMJITSymbolGenericFlagsCallable as u8,
                    TargetFlags: 0,
                },
            },
        };
        // SAFETY: one valid pair; the unit takes its name. On success the JITDylib
        // owns the unit, on failure we dispose of it.
        unsafe {
            let unit = LLVMOrcAbsoluteSymbols(&mut pair, 1);
            let err = LLVMOrcJITDylibDefine(self.main, unit);
            if !err.is_null() {
                LLVMOrcDisposeMaterializationUnit(unit);
                return Err(format!("defining helper {name}: {}", take_error(err)));
            }
        }
        self.helpers.insert(name, addr);
        Ok(())
    }

    /// Unlinks the code `tracker` owns and frees its memory.
    fn unload(&mut self, tracker: LLVMOrcResourceTrackerRef) {
        // SAFETY: `tracker` is a live tracker of the main JITDylib (its owner's
        // reference is released only after this), removed once: callers remove the
        // `Live` entry that names it first.
        let err = unsafe { LLVMOrcResourceTrackerRemove(tracker) };
        if !err.is_null() {
            // Nothing to tell a user who is dropping a kernel; the memory stays.
            drop(take_error(err));
        }
        self.unloaded += 1;
        if self.unloaded >= SWEEP_EVERY {
            self.unloaded = 0;
            // SAFETY: `lljit` is valid; clearing dead pool entries is always allowed.
            unsafe {
                let es = LLVMOrcLLJITGetExecutionSession(self.lljit);
                LLVMOrcSymbolStringPoolClearDeadEntries(
                    LLVMOrcExecutionSessionGetSymbolStringPool(es),
                );
            }
        }
    }
}

/// A kernel's machine code, loaded: its address, and the resource tracker that owns
/// it. Dropping the last handle unloads it.
pub(crate) struct Code {
    symbol: String,
    tracker: LLVMOrcResourceTrackerRef,
    generation: u64,
    /// The kernel function's address.
    pub(crate) addr: usize,
}

// SAFETY: the tracker is only used in `drop`, under the JIT's mutex; the code it
// owns is immutable and re-entrant.
unsafe impl Send for Code {}
// SAFETY: as above: no method touches the tracker through a shared reference.
unsafe impl Sync for Code {}

impl Drop for Code {
    fn drop(&mut self) {
        let Some(Ok(jit)) = JIT.get() else { return };
        let mut state = jit.lock();
        // A `load` of the same symbol that found this code dying has unloaded it
        // already (and replaced or removed the entry).
        if state
            .live
            .get(&self.symbol)
            .is_some_and(|l| l.generation == self.generation)
        {
            state.live.remove(&self.symbol);
            state.unload(self.tracker);
        }
        // SAFETY: this handle's reference to the tracker, released once.
        unsafe { LLVMOrcReleaseResourceTracker(self.tracker) };
    }
}

/// Loads relocatable object code that defines the function `symbol` and calls only
/// `helpers` (names and addresses in this process) and C library functions; returns
/// the code already loaded for `symbol` if it is still in use.
pub(crate) fn load(
    symbol: &str,
    object: &[u8],
    helpers: &[(&'static str, usize)],
) -> Result<Arc<Code>, String> {
    let jit = jit()?;
    let csymbol = CString::new(symbol).map_err(|e| e.to_string())?;
    let mut state = jit.lock();
    if let Some(live) = state.live.get(symbol) {
        if let Some(code) = live.code.upgrade() {
            return Ok(code);
        }
        // Its last user is dropping it right now: unload it on the user's behalf
        // (the user's `drop` sees the entry gone and only releases its reference).
        let tracker = live.tracker;
        state.live.remove(symbol);
        state.unload(tracker);
    }
    for &(name, addr) in helpers {
        state.define_helper(name, addr)?;
    }
    // SAFETY: `main` and `lljit` are valid. The buffer is a copy of `object`; adding
    // it hands it to the JIT, which owns it whether or not adding succeeds. The
    // tracker's reference is ours: kept in `Code` on success, released on failure
    // after removing whatever the failed attempt added.
    unsafe {
        let tracker = LLVMOrcJITDylibCreateResourceTracker(state.main);
        let buffer = LLVMCreateMemoryBufferWithMemoryRangeCopy(
            object.as_ptr().cast(),
            object.len(),
            csymbol.as_ptr(),
        );
        let mut err = LLVMOrcLLJITAddObjectFileWithRT(state.lljit, tracker, buffer);
        let mut addr = 0;
        if err.is_null() {
            // The lookup links the object (resolving its helpers) and returns the
            // function's address.
            err = LLVMOrcLLJITLookup(state.lljit, &mut addr, csymbol.as_ptr());
        }
        if !err.is_null() {
            let message = take_error(err);
            state.unload(tracker);
            LLVMOrcReleaseResourceTracker(tracker);
            return Err(format!("loading the kernel: {message}"));
        }
        let generation = state.next_generation;
        state.next_generation += 1;
        let code = Arc::new(Code {
            symbol: symbol.to_string(),
            tracker,
            generation,
            addr: addr as usize,
        });
        state.live.insert(
            symbol.to_string(),
            Live {
                code: Arc::downgrade(&code),
                tracker,
                generation,
            },
        );
        Ok(code)
    }
}

/// How many kernels are loaded now (for tests of unloading).
pub(crate) fn loaded() -> usize {
    match JIT.get() {
        Some(Ok(jit)) => jit.lock().live.len(),
        _ => 0,
    }
}
