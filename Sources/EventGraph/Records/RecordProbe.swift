/// A decoder that runs a record type's `init(from:)` over no object, to learn which
/// properties it reads, as which Swift types, and which are optionals.
///
/// The synthesized conformance reads an optional property with `decodeIfPresent`, which
/// asks `decodeNil` first: the probe notes the key as optional there and answers "not nil",
/// so that the `decode` that follows tells the type too.
final class RecordProbe: RecordDecoderBase {
  struct Found {
    let key: String
    let type: RecordFieldType?
    let swiftName: String
    let isOptional: Bool
  }

  /// What the probe learns, shared by its containers.
  final class Findings {
    var fields: [Found] = []
    var optionalKeys: Set<String> = []
  }

  let recordType: Any.Type
  let entityName: String
  let fields = Findings()
  var codingPath: [any CodingKey] { [] }

  init(record: Any.Type, entity: String) {
    self.recordType = record
    self.entityName = entity
  }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    KeyedDecodingContainer(Container<Key>(probe: self))
  }

  struct Container<Key: CodingKey>: RecordKeyedReading {
    let probe: RecordProbe
    var codingPath: [any CodingKey] { [] }

    func contains(_ key: Key) -> Bool { true }

    func decodeNil(forKey key: Key) throws -> Bool {
      probe.fields.optionalKeys.insert(key.stringValue)
      return false
    }

    func read<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
      let name = key.stringValue
      let isOptional = probe.fields.optionalKeys.contains(name)
      let fieldType = RecordFieldType.of(T.self)
      let swiftName = "\(T.self)" + (isOptional ? "?" : "")
      probe.fields.fields.append(Found(key: name, type: fieldType, swiftName: swiftName, isOptional: isOptional))
      let placeholder: Any? =
        switch fieldType {
        case .ref(_, let toMany): (T.self as? any AnyRefValue.Type)?.make(toMany ? [] : [ObjectID(1)])
        case let t?: t.placeholder
        case nil: nil
        }
      guard let value = placeholder as? T else {
        throw RecordError(
          .unsupportedType, record: probe.recordType, entity: probe.entityName, property: name, swiftType: swiftName,
          detail: "a record holds no value of this type (see the table in Docs/guide.md)")
      }
      return value
    }

    func nestingError(_ key: String?) -> any Error {
      RecordError(
        .unsupportedType, record: probe.recordType, entity: probe.entityName, property: key,
        detail: "a record's property is a value, a Ref or an array of Ref: nested containers are not stored")
    }
  }
}
