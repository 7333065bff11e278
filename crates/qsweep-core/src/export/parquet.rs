//! Parquet: one row group, one optional (nullable) column per CSV column,
//! typed by [`Kind`]: INT64 (signed, or unsigned for the seed), DOUBLE,
//! BOOLEAN or UTF-8 BYTE_ARRAY; empty fields are nulls. Written with the
//! `parquet` crate's column writer, uncompressed (no codec is compiled in),
//! which pandas, polars, pyarrow, DuckDB and Spark all read.

use std::sync::Arc;

use anyhow::{Context, Result};
use parquet::basic::{LogicalType, Repetition, Type as Physical};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

use super::{Kind, Table};

fn schema(table: &Table, kinds: &[Kind]) -> Result<Type> {
    let fields = table
        .header
        .iter()
        .zip(kinds)
        .map(|(name, kind)| {
            let (physical, logical) = match kind {
                Kind::Int => (Physical::INT64, Some(LogicalType::integer(64, true))),
                Kind::UInt => (Physical::INT64, Some(LogicalType::integer(64, false))),
                Kind::Float => (Physical::DOUBLE, None),
                Kind::Bool => (Physical::BOOLEAN, None),
                Kind::Text => (Physical::BYTE_ARRAY, Some(LogicalType::String)),
            };
            Type::primitive_type_builder(name, physical)
                .with_repetition(Repetition::OPTIONAL)
                .with_logical_type(logical)
                .build()
                .map(Arc::new)
                .with_context(|| format!("parquet schema of column '{name}'"))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Type::group_type_builder("qsweep_results")
        .with_fields(fields)
        .build()?)
}

/// The values present in column `c` parsed by `parse`, and the definition
/// levels (1: present, 0: null).
fn column<T>(table: &Table, c: usize, parse: impl Fn(&str) -> Option<T>) -> (Vec<T>, Vec<i16>) {
    let mut values = Vec::new();
    let mut levels = Vec::with_capacity(table.rows.len());
    for row in &table.rows {
        match parse(&row[c]).filter(|_| !row[c].is_empty()) {
            Some(v) => {
                values.push(v);
                levels.push(1);
            }
            None => levels.push(0),
        }
    }
    (values, levels)
}

pub(super) fn encode(table: &Table, kinds: &[Kind]) -> Result<Vec<u8>> {
    let props = WriterProperties::builder()
        .set_created_by(format!("qsweep {}", crate::provenance::VERSION))
        .build();
    let mut buf = Vec::new();
    let mut writer =
        SerializedFileWriter::new(&mut buf, Arc::new(schema(table, kinds)?), Arc::new(props))?;
    let mut group = writer.next_row_group()?;
    let mut c = 0;
    while let Some(mut col) = group.next_column()? {
        match kinds[c] {
            Kind::Int => {
                let (v, d) = column(table, c, |s| s.parse::<i64>().ok());
                col.typed::<Int64Type>().write_batch(&v, Some(&d), None)?;
            }
            Kind::UInt => {
                // Unsigned 64-bit values are stored in INT64's bits (the
                // logical type says how to read them back).
                let (v, d) = column(table, c, |s| s.parse::<u64>().ok().map(|u| u as i64));
                col.typed::<Int64Type>().write_batch(&v, Some(&d), None)?;
            }
            Kind::Float => {
                let (v, d) = column(table, c, |s| s.parse::<f64>().ok());
                col.typed::<DoubleType>().write_batch(&v, Some(&d), None)?;
            }
            Kind::Bool => {
                let (v, d) = column(table, c, |s| s.parse::<bool>().ok());
                col.typed::<BoolType>().write_batch(&v, Some(&d), None)?;
            }
            Kind::Text => {
                let (v, d) = column(table, c, |s| Some(ByteArray::from(s)));
                col.typed::<ByteArrayType>()
                    .write_batch(&v, Some(&d), None)?;
            }
        }
        col.close()?;
        c += 1;
    }
    group.close()?;
    writer.close()?;
    Ok(buf)
}
