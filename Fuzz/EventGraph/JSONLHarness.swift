// Compiled into the EventGraph module by Tools/fuzz only. See Docs/reliability.md, "Fuzzing".
internal import EventGraphText

extension Fuzz {
  /// The JSON Lines reader and the import file's checks.
  ///
  /// ``JSONLinesInput`` (the streamed line reader), the project's JSON parser under it, and
  /// the import file's checks (``ImportItem``, which reads each line's attributes as values
  /// of the fuzz model's types). Every parsed line serializes to text that parses to the
  /// same JSON and serializes the same; every attribute value read writes JSON that reads
  /// back the same.
  package static func jsonl(_ data: UnsafeRawBufferPointer) {
    let input = JSONLinesInput(bytes: [UInt8](data))
    while let line = try? input.next() {
      guard let json = try? JSON(parsing: line.bytes) else { continue }
      let text = json.serialized()
      do {
        let again = try JSON(parsing: text)
        check(again == json, "serialized JSON parses to another value: \(text)")
        check(again.serialized() == text, "JSON serialization is not stable: \(text)")
        let pretty = try JSON(parsing: json.serialized(pretty: true))
        check(pretty == json, "pretty JSON parses to another value: \(text)")
      } catch {
        fatalError("fuzz law broken: serialized JSON does not parse: \(error): \(text)")
      }
      guard let item = try? ImportItem(line: line.number, bytes: line.bytes, model: Fuzz.model) else { continue }
      for (attribute, value) in item.attributes {
        guard let value else { continue }
        let json = value.json
        do {
          let again = try Value.fromJSON(json, as: attribute.type)
          check(
            again == value || value.isNaN,
            "\(attribute.type) value \(value) reads back as \(String(describing: again))")
        } catch {
          fatalError("fuzz law broken: a \(attribute.type) value's JSON does not read back: \(error): \(value)")
        }
      }
    }
  }
}

extension Value {
  fileprivate var isNaN: Bool {
    switch self {
    case .double(let d): d.isNaN
    case .float(let f): f.isNaN
    default: false
    }
  }
}
