/// A keyed container whose every `decode` goes through one generic ``read(_:forKey:)``:
/// the boilerplate both record decoders (the probe and the reader) would otherwise repeat.
protocol RecordKeyedReading: KeyedDecodingContainerProtocol {
  func read<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T
  /// The error for a nested container, which a record does not have.
  func nestingError(_ key: String?) -> any Error
}

extension RecordKeyedReading {
  var allKeys: [Key] { [] }
  func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try read(type, forKey: key) }
  func decode(_ type: String.Type, forKey key: Key) throws -> String { try read(type, forKey: key) }
  func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try read(type, forKey: key) }
  func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try read(type, forKey: key) }
  func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try read(type, forKey: key) }
  func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try read(type, forKey: key) }
  func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try read(type, forKey: key) }
  func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try read(type, forKey: key) }
  func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try read(type, forKey: key) }
  func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try read(type, forKey: key) }
  func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try read(type, forKey: key) }
  func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try read(type, forKey: key) }
  func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try read(type, forKey: key) }
  func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try read(type, forKey: key) }
  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try read(type, forKey: key) }

  func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
    -> KeyedDecodingContainer<NestedKey>
  { throw nestingError(key.stringValue) }
  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    throw nestingError(key.stringValue)
  }
  func superDecoder() throws -> any Decoder { throw nestingError(nil) }
  func superDecoder(forKey key: Key) throws -> any Decoder { throw nestingError(key.stringValue) }
}

/// A decoder that never reaches a value: what a record's `init(from:)` may ask of it
/// beyond its keyed container.
protocol RecordDecoderBase: Decoder {
  var recordType: Any.Type { get }
  var entityName: String { get }
}

extension RecordDecoderBase {
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  func wholeRecordError() -> RecordError {
    RecordError(
      .unsupportedType, record: recordType, entity: entityName,
      detail: "a record is decoded through a keyed container (the synthesized Codable conformance)")
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw wholeRecordError() }
  func singleValueContainer() throws -> any SingleValueDecodingContainer { throw wholeRecordError() }
}
