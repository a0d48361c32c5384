/// A decoder over one object's stored values: a record's `init(from:)` reads them
/// straight from the projection's ``ObjectState`` (and its relationships), with no JSON or
/// other form in between.
struct RecordReader: RecordDecoderBase {
  let schema: RecordSchema
  let state: ObjectState
  let related: (ObjectID, PropertyID) throws -> [ObjectID]
  let recordType: Any.Type
  var entityName: String { schema.entity.name }
  var codingPath: [any CodingKey] { [] }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    KeyedDecodingContainer(Container<Key>(reader: self))
  }

  // Out of line: the throw sites stay small in the typed reads, which inline them (record-fetch
  // +3.15% in the guard with it inlined, +2.96% without).
  @inline(never)
  func failure(_ code: RecordError.Code, _ key: String?, _ swiftType: Any.Type?, _ detail: String) -> RecordError {
    RecordError(
      code, record: recordType, entity: entityName, property: key, swiftType: swiftType.map { "\($0)" },
      detail: "\(detail) (object \(entityName)/\(state.id.rawValue))")
  }

  /// A class, so that it can follow the record's reads: a synthesized `init(from:)` reads
  /// the properties in declaration order, the order of the schema's fields, so the next
  /// field is tried first (a comparison of two short strings) before the entity's lookup.
  final class Container<Key: CodingKey>: RecordKeyedReading {
    let reader: RecordReader
    var codingPath: [any CodingKey] { [] }

    private var next = 0

    init(reader: RecordReader) { self.reader = reader }

    private func field(_ key: Key) -> RecordSchema.Field? {
      let name = key.stringValue
      let fields = reader.schema.fields
      if next < fields.count, fields[next].key == name {
        next += 1
        return fields[next - 1]
      }
      guard let i = reader.schema.position(name) else { return nil }
      next = i + 1
      return fields[i]
    }

    func contains(_ key: Key) -> Bool {
      guard let f = field(key) else { return false }
      switch f.type {
      case .ref(_, let toMany): return toMany || !((try? reader.related(reader.state.id, f.property))?.isEmpty ?? true)
      default: return (try? reader.present(f.property)) != nil
      }
    }

    func decodeNil(forKey key: Key) throws -> Bool { !contains(key) }

    // The common types read without going through `Any`, and an optional's presence and
    // value found with one lookup (the protocol's default asks `contains`, `decodeNil` and
    // `decode` in turn).
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try quick(key, RecordReader.string) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try quick(key, RecordReader.int16) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try quick(key, RecordReader.int32) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try quick(key, RecordReader.int64) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try quick(key, RecordReader.double) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try quick(key, RecordReader.bool) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
      try quickIfPresent(key, RecordReader.string)
    }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? {
      try quickIfPresent(key, RecordReader.int16)
    }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
      try quickIfPresent(key, RecordReader.int32)
    }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
      try quickIfPresent(key, RecordReader.int64)
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
      try quickIfPresent(key, RecordReader.double)
    }
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
      try quickIfPresent(key, RecordReader.bool)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
      guard let f = field(key) else { return nil }
      return try reader.valueIfPresent(type, f)
    }

    private func quick<T: Decodable>(_ key: Key, _ pick: (Value) -> T?) throws -> T {
      guard let f = field(key) else { return try read(T.self, forKey: key) }
      return try reader.quick(f, pick)
    }

    private func quickIfPresent<T: Decodable>(_ key: Key, _ pick: (Value) -> T?) throws -> T? {
      guard let f = field(key) else { return nil }
      return try reader.quickIfPresent(f, pick)
    }

    func read<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
      guard let f = field(key) else {
        throw reader.failure(.notInSchema, key.stringValue, T.self, "not a property the record type was checked with")
      }
      return try reader.value(type, f)
    }

    func nestingError(_ key: String?) -> any Error {
      reader.failure(.unsupportedType, key, nil, "a record's property is a value, a Ref or an array of Ref")
    }
  }

  static func string(_ v: Value) -> String? { if case .string(let s) = v { s } else { nil } }
  static func int16(_ v: Value) -> Int16? { if case .int16(let n) = v { n } else { nil } }
  static func int32(_ v: Value) -> Int32? { if case .int32(let n) = v { n } else { nil } }
  static func int64(_ v: Value) -> Int64? { if case .int64(let n) = v { n } else { nil } }
  static func double(_ v: Value) -> Double? { if case .double(let d) = v { d } else { nil } }
  static func bool(_ v: Value) -> Bool? { if case .boolean(let b) = v { b } else { nil } }

  /// The stored value of `property`, `nil` for a personal value erased with its subject
  /// (an optional property reads it as `nil`: Docs/privacy.md).
  ///
  /// - Throws: ``RecordError`` for a personal value the store had no key to open.
  @inline(__always)
  func present(_ property: PropertyID, _ f: RecordSchema.Field? = nil, _ swiftType: Any.Type? = nil) throws -> Value? {
    // Read once and tested without a binding on the common path (a plain value): a
    // pattern binding copied it once more, a retain and a release per field read.
    let v = state[property]
    guard v?.isSealed == true else { return v }
    return try sealedPresent(v, f, swiftType)
  }

  /// ``present(_:_:_:)`` for a sealed value, off the common path.
  @inline(never)
  private func sealedPresent(_ v: Value?, _ f: RecordSchema.Field?, _ swiftType: Any.Type?) throws -> Value? {
    if case .sealed(let s)? = v, s.state == .erased { return nil }
    throw failure(.keyRequired, f?.key, swiftType, "a personal value, and the store was opened without its key")
  }

  /// The value `pick` takes from field `f`'s stored one, or the general path's answer (and error).
  func quick<T: Decodable>(_ f: RecordSchema.Field, _ pick: (Value) -> T?) throws -> T {
    if let v = try present(f.property, f, T.self), let x = pick(v) { return x }
    return try value(T.self, f)
  }

  /// ``quick(_:_:)`` for an optional: `nil` when the object has no value.
  func quickIfPresent<T: Decodable>(_ f: RecordSchema.Field, _ pick: (Value) -> T?) throws -> T? {
    guard let v = try present(f.property, f, T.self) else { return nil }
    if let x = pick(v) { return x }
    return try value(T.self, f)
  }

  /// The value of field `f` as a `T`, `nil` when the object has none (an empty to-one
  /// relationship, an unset attribute).
  func valueIfPresent<T: Decodable>(_ type: T.Type, _ f: RecordSchema.Field) throws -> T? {
    if case .ref(_, let toMany) = f.type, !toMany, try related(state.id, f.property).isEmpty { return nil }
    if f.attributeType != nil, try present(f.property, f, T.self) == nil { return nil }
    return try value(type, f)
  }

  /// The value of field `f` as a `T`.
  func value<T: Decodable>(_ type: T.Type, _ f: RecordSchema.Field) throws -> T {
    if case .ref = f.type {
      let ids = try related(state.id, f.property)
      guard let v = (T.self as? any AnyRefValue.Type)?.make(ids) as? T else {
        throw failure(.missingValue, f.key, T.self, "the relationship is empty")
      }
      return v
    }
    guard let stored = try present(f.property, f, T.self) else {
      if case .sealed? = state[f.property] {
        throw failure(
          .erasedValue, f.key, T.self,
          "the personal value was erased with its subject, and the property is not an optional")
      }
      throw failure(.missingValue, f.key, T.self, "no value, and the property is not an optional")
    }
    guard let v = f.type.swiftValue(stored) as? T else {
      throw failure(
        .valueDoesNotFit, f.key, T.self, "the stored \(stored.type.rawValue) \(stored.displayText) does not fit")
    }
    return v
  }
}
