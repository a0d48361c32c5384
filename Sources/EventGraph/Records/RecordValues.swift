/// One object's stored values, read by the position of the record's property: what a
/// record's ``Record/init(reading:)`` takes instead of a `Decoder`.
///
/// Position `i` is the record's `i`-th stored property in declaration order (the order
/// of its `Codable` keys, which the record's check against the model follows), so a read
/// is an index into the checked fields, no key compared. `value(_:)` reads a property that
/// is no optional, `optional(_:)` one that is: `String`, the integers, `Double` and `Bool`
/// straight from the stored value, every other record type (``Ref``, arrays of them,
/// `Date`, ...) through the same conversion as the `Codable` path. A position past the
/// record's properties or a stored value of another type is a ``RecordError``, never a trap.
public struct RecordValues {
  let reader: RecordReader

  private func field(_ i: Int) throws -> RecordSchema.Field {
    let fields = reader.schema.fields
    guard fields.indices.contains(i) else {
      throw reader.failure(.notInSchema, nil, nil, "a read of property \(i) of a record checked with \(fields.count)")
    }
    return fields[i]
  }

  public func value(_ i: Int) throws -> String { try reader.quick(field(i), RecordReader.string) }
  public func value(_ i: Int) throws -> Int16 { try reader.quick(field(i), RecordReader.int16) }
  public func value(_ i: Int) throws -> Int32 { try reader.quick(field(i), RecordReader.int32) }
  public func value(_ i: Int) throws -> Int64 { try reader.quick(field(i), RecordReader.int64) }
  public func value(_ i: Int) throws -> Double { try reader.quick(field(i), RecordReader.double) }
  public func value(_ i: Int) throws -> Bool { try reader.quick(field(i), RecordReader.bool) }
  public func value<T: Decodable>(_ i: Int) throws -> T { try reader.value(T.self, field(i)) }

  public func optional(_ i: Int) throws -> String? { try reader.quickIfPresent(field(i), RecordReader.string) }
  public func optional(_ i: Int) throws -> Int16? { try reader.quickIfPresent(field(i), RecordReader.int16) }
  public func optional(_ i: Int) throws -> Int32? { try reader.quickIfPresent(field(i), RecordReader.int32) }
  public func optional(_ i: Int) throws -> Int64? { try reader.quickIfPresent(field(i), RecordReader.int64) }
  public func optional(_ i: Int) throws -> Double? { try reader.quickIfPresent(field(i), RecordReader.double) }
  public func optional(_ i: Int) throws -> Bool? { try reader.quickIfPresent(field(i), RecordReader.bool) }
  public func optional<T: Decodable>(_ i: Int) throws -> T? { try reader.valueIfPresent(T.self, field(i)) }
}
