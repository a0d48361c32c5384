// Compiled into the EventGraphQuery module by Tools/fuzz only (not a SwiftPM target), so
// that the query harness reaches the syntax tree; the harnesses compiled into EventGraph
// extend `Fuzz` to reach that module's internal decoders. See Docs/reliability.md, "Fuzzing".
import EventGraphModel
import Foundation

/// What every harness shares: the model the records, predicates and lines are read against,
/// and the check that turns a broken law into a trap the fuzzer reports.
package enum Fuzz {
  /// A model with an attribute of every type, relationships of every kind and an
  /// abstract parent, so that the checker and the import plan meet each case.
  package static let modelText = """
    {"name": "Fuzz", "version": 3, "entities": [
      {"name": "Thing", "abstract": true, "attributes": [
        {"name": "label", "type": "string", "optional": true, "indexed": true}]},
      {"name": "Sample", "parent": "Thing", "attributes": [
        {"name": "s", "type": "string", "optional": true},
        {"name": "i16", "type": "int16", "optional": true},
        {"name": "i32", "type": "int32", "optional": true},
        {"name": "i64", "type": "int64", "optional": true, "indexed": true},
        {"name": "d", "type": "double", "optional": true},
        {"name": "f", "type": "float", "optional": true},
        {"name": "dec", "type": "decimal", "optional": true},
        {"name": "b", "type": "boolean", "optional": true},
        {"name": "t", "type": "date", "optional": true},
        {"name": "bin", "type": "binary", "optional": true},
        {"name": "u", "type": "uuid", "optional": true},
        {"name": "url", "type": "uri", "optional": true}],
       "relationships": [
        {"name": "parent", "destination": "Sample", "inverse": "children"},
        {"name": "children", "destination": "Sample", "toMany": true, "ordered": true, "inverse": "parent",
         "deleteRule": "cascade"},
        {"name": "tags", "destination": "Tag", "toMany": true, "inverse": "samples"}]},
      {"name": "Tag", "attributes": [{"name": "name", "type": "string"}],
       "relationships": [{"name": "samples", "destination": "Sample", "toMany": true, "inverse": "tags"}]}
    ]}
    """

  package static let model: Model = {
    do {
      return try Model(json: Array(modelText.utf8), file: "fuzz model")
    } catch {
      fatalError("the fuzz model does not load: \(error)")
    }
  }()

  /// An entity of the fuzz model, by name.
  package static func entity(_ name: String) -> Entity {
    guard let e = model.entity(named: name) else { fatalError("the fuzz model has no entity \(name)") }
    return e
  }

  /// A property of the fuzz model, by entity and name.
  package static func property(_ entity: String, _ name: String) -> PropertyID {
    guard let p = Fuzz.entity(entity).property(named: name) else { fatalError("no property \(entity).\(name)") }
    return p.id
  }

  /// A decimal from its text.
  package static func decimal(_ text: String) -> Decimal {
    guard let d = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
      fatalError("not a decimal: \(text)")
    }
    return d
  }

  /// Traps (a finding for libFuzzer) when a law does not hold.
  package static func check(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, file: StaticString = #file,
    line: UInt = #line
  ) {
    if !condition() { fatalError("fuzz law broken: \(message())", file: file, line: line) }
  }

  /// The input as text: valid UTF-8 as it is, anything else repaired (the parsers take
  /// `String`s; the bytes-level readers get the raw bytes).
  package static func text(_ data: UnsafeRawBufferPointer) -> String { String(decoding: data, as: UTF8.self) }
}
