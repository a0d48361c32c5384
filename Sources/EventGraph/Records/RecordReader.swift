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

  func failure(_ key: String?, _ swiftType: Any.Type?, _ detail: String) -> RecordError {
    RecordError(
      record: recordType, entity: entityName, property: key, swiftType: swiftType.map { "\($0)" },
      detail: "\(detail) (object \(entityName)/\(state.id.rawValue))")
  }

  struct Container<Key: CodingKey>: RecordKeyedReading {
    let reader: RecordReader
    var codingPath: [any CodingKey] { [] }

    private func field(_ key: Key) -> RecordSchema.Field? { reader.schema.field(key.stringValue) }

    func contains(_ key: Key) -> Bool {
      guard let f = field(key) else { return false }
      switch f.type {
      case .ref(_, let toMany): return toMany || !((try? reader.related(reader.state.id, f.property))?.isEmpty ?? true)
      default: return reader.state[f.property] != nil
      }
    }

    func decodeNil(forKey key: Key) throws -> Bool { !contains(key) }

    // The common types read without going through `Any`.
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
      try quick(key) { if case .string(let s) = $0 { s } else { nil } }
    }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
      try quick(key) { if case .int64(let n) = $0 { n } else { nil } }
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
      try quick(key) { if case .double(let d) = $0 { d } else { nil } }
    }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
      try quick(key) { if case .boolean(let b) = $0 { b } else { nil } }
    }

    /// The value `pick` takes from the stored one, or the general path's answer (and error).
    private func quick<T: Decodable>(_ key: Key, _ pick: (Value) -> T?) throws -> T {
      if let f = field(key), let v = reader.state[f.property], let x = pick(v) { return x }
      return try read(T.self, forKey: key)
    }

    func read<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
      guard let f = field(key) else {
        throw reader.failure(key.stringValue, T.self, "not a property the record type was checked with")
      }
      if case .ref = f.type {
        let ids = try reader.related(reader.state.id, f.property)
        guard let v = (T.self as? any AnyRefValue.Type)?.make(ids) as? T else {
          throw reader.failure(f.key, T.self, "the relationship is empty")
        }
        return v
      }
      guard let stored = reader.state[f.property] else {
        throw reader.failure(f.key, T.self, "no value, and the property is not an optional")
      }
      guard let v = f.type.swiftValue(stored) as? T else {
        throw reader.failure(f.key, T.self, "the stored \(stored.type.rawValue) \(stored.displayText) does not fit")
      }
      return v
    }

    func nestingError(_ key: String?) -> any Error {
      reader.failure(key, nil, "a record's property is a value, a Ref or an array of Ref")
    }
  }
}
