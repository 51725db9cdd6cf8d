//! Direct tests of the back end on hand-built programs, checked against plain Rust.

use broadhead_codegen::{
    compile, ArithOp, ByteLayout, CmpOp, CompileOptions, InputSpec, Mode, Node, OutSlot, PType,
    Program, Slot,
};

fn slot(values: *const u8, validity: *const u64) -> Slot {
    Slot {
        values,
        validity,
        data: std::ptr::null(),
    }
}

/// `x > p0` over f64, every batch length around the block edges, in all output modes.
#[test]
fn float_filter_selects_the_same_rows_as_a_loop_in_every_mode() {
    let prog = Program {
        nodes: vec![Node::Input(0), Node::Param(0), Node::Cmp(CmpOp::Gt, 0, 1)],
        inputs: vec![InputSpec {
            ty: PType::F64,
            nullable: false,
            layout: ByteLayout::Offsets32,
            stored_as_i128: false,
        }],
        params: vec![PType::F64],
        outputs: vec![2],
        mode: Mode::Filter,
    };
    let k = compile(&prog, CompileOptions::default()).unwrap();
    for rows in [0usize, 1, 63, 64, 65, 127, 128, 1000] {
        let x: Vec<f64> = (0..rows).map(|i| ((i * 37) % 100) as f64).collect();
        let expect: Vec<u32> = (0..rows as u32).filter(|&i| x[i as usize] > 50.0).collect();
        let params = [50.0f64.to_bits()];
        let inputs = [slot(x.as_ptr() as *const u8, std::ptr::null())];
        let mut sel = vec![0u32; rows];
        let outs = [OutSlot {
            values: sel.as_mut_ptr() as *mut u8,
            validity: std::ptr::null_mut(),
        }];
        // SAFETY: buffers sized as Kernel::run requires.
        let n = unsafe { k.run(&inputs, &params, rows, &outs, 4, std::ptr::null_mut()) }.unwrap();
        assert_eq!(&sel[..n], &expect[..], "rows = {rows}");
        let mut sel64 = vec![0u64; rows];
        let outs = [OutSlot {
            values: sel64.as_mut_ptr() as *mut u8,
            validity: std::ptr::null_mut(),
        }];
        // SAFETY: as above.
        let n = unsafe { k.run(&inputs, &params, rows, &outs, 8, std::ptr::null_mut()) }.unwrap();
        assert_eq!(
            sel64[..n].iter().map(|&v| v as u32).collect::<Vec<_>>(),
            expect
        );
        let mut words = vec![0u64; rows.div_ceil(64)];
        let outs = [OutSlot {
            values: words.as_mut_ptr() as *mut u8,
            validity: std::ptr::null_mut(),
        }];
        // SAFETY: as above.
        let n = unsafe { k.run(&inputs, &params, rows, &outs, 0, std::ptr::null_mut()) }.unwrap();
        assert_eq!(n, expect.len());
        for &i in &expect {
            assert!(words[i as usize / 64] >> (i % 64) & 1 == 1);
        }
    }
}

/// `a / b` on i32 reports the first row with a zero divisor; projection values otherwise.
#[test]
fn integer_division_projects_values_and_reports_the_first_zero_divisor() {
    let prog = Program {
        nodes: vec![
            Node::Input(0),
            Node::Input(1),
            Node::Arith(ArithOp::Div, 0, 1),
        ],
        inputs: vec![
            InputSpec {
                ty: PType::I32,
                nullable: false,
                layout: ByteLayout::Offsets32,
                stored_as_i128: false,
            },
            InputSpec {
                ty: PType::I32,
                nullable: true,
                layout: ByteLayout::Offsets32,
                stored_as_i128: false,
            },
        ],
        params: vec![],
        outputs: vec![2],
        mode: Mode::Project,
    };
    let k = compile(
        &prog,
        CompileOptions {
            explain: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(k
        .explain
        .as_ref()
        .unwrap()
        .optimized_ir
        .contains("broadhead_kernel"));
    let rows = 70;
    let a: Vec<i32> = (0..rows as i32).map(|i| i * 7 - 100).collect();
    let mut b: Vec<i32> = (0..rows as i32).map(|i| (i % 5) + 1).collect();
    // Row 66 has b = 0 but is NULL: no error.
    b[66] = 0;
    let validity = [u64::MAX, !(1u64 << 2)];
    let mut out = vec![0i32; rows];
    let mut out_valid = vec![0u64; 2];
    let inputs = [
        slot(a.as_ptr() as *const u8, std::ptr::null()),
        slot(b.as_ptr() as *const u8, validity.as_ptr()),
    ];
    let outs = [OutSlot {
        values: out.as_mut_ptr() as *mut u8,
        validity: out_valid.as_mut_ptr(),
    }];
    // SAFETY: buffers sized as Kernel::run requires.
    unsafe { k.run(&inputs, &[], rows, &outs, 0, std::ptr::null_mut()) }.unwrap();
    for i in 0..rows {
        if i != 66 {
            assert_eq!(out[i], a[i] / b[i], "row {i}");
        }
    }
    assert_eq!(out_valid[1] & 0b111111, !(1u64 << 2) & 0b111111);
    b[3] = 0;
    b[40] = 0;
    // SAFETY: as above.
    assert_eq!(
        unsafe { k.run(&inputs, &[], rows, &outs, 0, std::ptr::null_mut()) },
        Err(3)
    );
}

/// A projection's kernel leaves the validity words of an output no row can make
/// NULL as they were, and says so in its result; it writes the others'.
#[test]
fn outputs_without_nulls_get_no_validity_and_are_reported() {
    let input = |nullable| InputSpec {
        ty: PType::F64,
        nullable,
        layout: ByteLayout::Offsets32,
        stored_as_i128: false,
    };
    // a * a, b * a, a > b.
    let prog = Program {
        nodes: vec![
            Node::Input(0),
            Node::Input(1),
            Node::Arith(ArithOp::Mul, 0, 0),
            Node::Arith(ArithOp::Mul, 1, 0),
            Node::Cmp(CmpOp::Gt, 0, 1),
        ],
        inputs: vec![input(false), input(true)],
        params: vec![],
        outputs: vec![2, 3, 4],
        mode: Mode::Project,
    };
    let k = compile(&prog, CompileOptions::default()).unwrap();
    for rows in [1usize, 16, 17, 100] {
        let a: Vec<f64> = (0..rows).map(|i| i as f64).collect();
        let b: Vec<f64> = (0..rows).map(|i| (rows - i) as f64).collect();
        // Every row of b valid but row 0.
        let mut b_valid = vec![u64::MAX; rows.div_ceil(64)];
        b_valid[0] = !1;
        let inputs = [
            slot(a.as_ptr() as *const u8, std::ptr::null()),
            slot(b.as_ptr() as *const u8, b_valid.as_ptr()),
        ];
        let words = rows.div_ceil(64);
        let mut squares = vec![0f64; rows];
        let mut products = vec![0f64; rows];
        let mut greater = vec![0u64; words];
        const UNTOUCHED: u64 = 0x5555_5555_5555_5555;
        let (mut v0, mut v1, mut v2) = (
            vec![UNTOUCHED; words],
            vec![UNTOUCHED; words],
            vec![UNTOUCHED; words],
        );
        let outs = [
            OutSlot {
                values: squares.as_mut_ptr() as *mut u8,
                validity: v0.as_mut_ptr(),
            },
            OutSlot {
                values: products.as_mut_ptr() as *mut u8,
                validity: v1.as_mut_ptr(),
            },
            OutSlot {
                values: greater.as_mut_ptr() as *mut u8,
                validity: v2.as_mut_ptr(),
            },
        ];
        // SAFETY: buffers sized as Kernel::run requires.
        let result = unsafe { k.run(&inputs, &[], rows, &outs, 0, std::ptr::null_mut()) };
        assert_eq!(result, Ok(0b001), "{rows} rows: only a * a is never NULL");
        for i in 0..rows {
            assert_eq!(squares[i], a[i] * a[i], "row {i}");
            if i > 0 {
                assert_eq!(products[i], b[i] * a[i], "row {i}");
                assert_eq!(greater[i / 64] >> (i % 64) & 1 == 1, a[i] > b[i], "row {i}");
            }
        }
        let rows_mask = |w: usize| match (rows - 64 * w).min(64) {
            64 => u64::MAX,
            n => (1u64 << n) - 1,
        };
        for (w, ((square, product), greater)) in v0.iter().zip(&v1).zip(&v2).enumerate() {
            assert_eq!(*square, UNTOUCHED, "a * a: its validity untouched");
            let expected = if w == 0 { !1u64 } else { u64::MAX } & rows_mask(w);
            assert_eq!(product & rows_mask(w), expected, "b * a");
            assert_eq!(greater & rows_mask(w), expected, "a > b");
        }
    }
}
