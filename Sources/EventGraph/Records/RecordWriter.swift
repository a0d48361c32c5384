/// An encoder that turns a record into the values and relationship targets of its object,
/// by ``PropertyID``: what an insert or an update writes.
///
/// Every property the record type was checked with starts as `nil` (or an empty
/// relationship), since the synthesized conformance leaves out an optional that is `nil`:
/// an update must still clear it.
final class RecordWriter: Encoder {
  let schema: RecordSchema
  let recordType: Any.Type
  /// The values of the record's attributes, in ``RecordSchema/fields`` order.
  var values: [Value?]
  /// The targets of the record's relationships, in ``RecordSchema/fields`` order.
  var targets: [[ObjectID]]
  /// The first property that could not be encoded.
  var failure: RecordError?
  var codingPath: [any CodingKey] { [] }
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  init(schema: RecordSchema, recordType: Any.Type) {
    self.schema = schema
    self.recordType = recordType
    self.values = [Value?](repeating: nil, count: schema.fields.count)
    self.targets = [[ObjectID]](repeating: [], count: schema.fields.count)
  }

  /// The record's values and targets, or the error that stopped them.
  static func encode<R: Record>(_ record: R, schema: RecordSchema) throws -> RecordWriter {
    let w = RecordWriter(schema: schema, recordType: R.self)
    try record.encode(to: w)
    if let failure = w.failure { throw failure }
    return w
  }

  func fail(_ code: RecordError.Code, _ key: String?, _ swiftType: Any.Type?, _ detail: String) {
    if failure == nil {
      failure = RecordError(
        code, record: recordType, entity: schema.entity.name, property: key, swiftType: swiftType.map { "\($0)" },
        detail: detail)
    }
  }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    KeyedEncodingContainer(Container<Key>(writer: self))
  }

  func unkeyedContainer() -> any UnkeyedEncodingContainer { RefusingContainer(writer: self) }
  func singleValueContainer() -> any SingleValueEncodingContainer { RefusingContainer(writer: self) }

  /// The index in the schema's fields of the record's property `key`.
  private func index(_ key: String, _ swiftType: Any.Type?) -> Int? {
    if let p = schema.entity.propertyID(named: key), case let i = schema.fieldIndex[Int(p.rawValue)], i >= 0 {
      return i
    }
    fail(.notInSchema, key, swiftType, "not a property the record type was checked with")
    return nil
  }

  /// Writes a value already made (the common types, which need no `Any`); the attribute's
  /// type is applied when the object is written, as for the dynamic API.
  fileprivate func write(_ key: String, _ swiftType: Any.Type, _ make: (AttributeType) -> Value) {
    guard let i = index(key, swiftType) else { return }
    guard let type = schema.fields[i].attributeType else { return fail(.valueDoesNotFit, key, swiftType, "not a Ref") }
    values[i] = make(type)
  }

  fileprivate func write<T: Encodable>(_ value: T, key: String) {
    guard let i = index(key, T.self) else { return }
    let f = schema.fields[i]
    if case .ref = f.type {
      guard let r = value as? any AnyRefValue else { return fail(.valueDoesNotFit, key, T.self, "not a Ref") }
      targets[i] = r.ids
    } else if let type = f.attributeType, let v = f.type.storedValue(value, as: type) {
      values[i] = v
    } else {
      fail(.valueDoesNotFit, key, T.self, "not the type the record type was checked with")
    }
  }

  fileprivate func writeNil(key: String) {
    guard let i = index(key, nil) else { return }
    values[i] = nil
    targets[i] = []
  }

  struct Container<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let writer: RecordWriter
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws { writer.writeNil(key: key.stringValue) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { writer.write(value, key: key.stringValue) }
    mutating func encode(_ value: Bool, forKey key: Key) throws {
      writer.write(key.stringValue, Bool.self) { _ in .boolean(value) }
    }
    mutating func encode(_ value: String, forKey key: Key) throws {
      writer.write(key.stringValue, String.self) { $0 == .uri ? .uri(value) : .string(value) }
    }
    mutating func encode(_ value: Double, forKey key: Key) throws {
      writer.write(key.stringValue, Double.self) { _ in .double(value) }
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
      writer.write(key.stringValue, Float.self) { _ in .float(value) }
    }
    mutating func encode(_ value: Int, forKey key: Key) throws {
      writer.write(key.stringValue, Int.self) { _ in .int64(Int64(value)) }
    }
    mutating func encode(_ value: Int8, forKey key: Key) throws { writer.write(value, key: key.stringValue) }
    mutating func encode(_ value: Int16, forKey key: Key) throws {
      writer.write(key.stringValue, Int16.self) { _ in .int16(value) }
    }
    mutating func encode(_ value: Int32, forKey key: Key) throws {
      writer.write(key.stringValue, Int32.self) { _ in .int32(value) }
    }
    mutating func encode(_ value: Int64, forKey key: Key) throws {
      writer.write(key.stringValue, Int64.self) { _ in .int64(value) }
    }
    mutating func encode(_ value: UInt, forKey key: Key) throws { writer.write(value, key: key.stringValue) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { writer.write(value, key: key.stringValue) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { writer.write(value, key: key.stringValue) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { writer.write(value, key: key.stringValue) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { writer.write(value, key: key.stringValue) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
      -> KeyedEncodingContainer<NestedKey>
    {
      writer.fail(.unsupportedType, key.stringValue, nil, "a record's property is a value, a Ref or an array of Ref")
      return KeyedEncodingContainer(Container<NestedKey>(writer: writer))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
      writer.fail(.unsupportedType, key.stringValue, nil, "a record's property is a value, a Ref or an array of Ref")
      return RefusingContainer(writer: writer)
    }

    mutating func superEncoder() -> any Encoder { writer }
    mutating func superEncoder(forKey key: Key) -> any Encoder { writer }
  }
}

/// The container a record gets when it asks for anything but a keyed one: every value
/// written to it is refused.
private struct RefusingContainer: UnkeyedEncodingContainer, SingleValueEncodingContainer {
  let writer: RecordWriter
  var codingPath: [any CodingKey] { [] }
  var count: Int { 0 }

  private func refuse() {
    writer.fail(
      .unsupportedType, nil, nil, "a record is encoded through a keyed container (the synthesized Codable conformance)")
  }

  mutating func encodeNil() throws { refuse() }
  mutating func encode<T: Encodable>(_ value: T) throws { refuse() }
  mutating func encode(_ value: Bool) throws { refuse() }
  mutating func encode(_ value: String) throws { refuse() }
  mutating func encode(_ value: Double) throws { refuse() }
  mutating func encode(_ value: Float) throws { refuse() }
  mutating func encode(_ value: Int) throws { refuse() }
  mutating func encode(_ value: Int8) throws { refuse() }
  mutating func encode(_ value: Int16) throws { refuse() }
  mutating func encode(_ value: Int32) throws { refuse() }
  mutating func encode(_ value: Int64) throws { refuse() }
  mutating func encode(_ value: UInt) throws { refuse() }
  mutating func encode(_ value: UInt8) throws { refuse() }
  mutating func encode(_ value: UInt16) throws { refuse() }
  mutating func encode(_ value: UInt32) throws { refuse() }
  mutating func encode(_ value: UInt64) throws { refuse() }

  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
    -> KeyedEncodingContainer<NestedKey>
  {
    refuse()
    return KeyedEncodingContainer(RecordWriter.Container<NestedKey>(writer: writer))
  }

  mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
    refuse()
    return self
  }

  mutating func superEncoder() -> any Encoder { writer }
}
