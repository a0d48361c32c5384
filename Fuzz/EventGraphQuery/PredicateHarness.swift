// Compiled into the EventGraphQuery module by Tools/fuzz only. See Docs/reliability.md, "Fuzzing".
import EventGraphModel
import Foundation

extension Fuzz {
  /// The query language.
  ///
  /// The input, as text, is parsed as a predicate and as an expression
  /// (``QueryParser``); what parses prints to text that parses to the same tree and prints
  /// the same (the printer's law); the tree is checked and compiled against the fuzz model
  /// (``QueryChecker``) and, when it compiles, evaluated on a small object graph. A thrown
  /// ``QueryError`` is a clean refusal; a trap, a hang or a broken law is a finding.
  package static func predicate(_ data: UnsafeRawBufferPointer) {
    let text = Fuzz.text(data)
    let graph = FuzzObjects.shared
    let sample = graph.sample
    if let p = try? QueryPredicate(parsing: text) {
      checkPrinting(p, "predicate") { try QueryPredicate(parsing: $0) }
      if let c = try? CompiledPredicate.compile(p, entity: sample, model: Fuzz.model, variables: FuzzObjects.types) {
        for o in graph.objects(of: sample) { _ = try? c.evaluate(o, in: graph, variables: graph.variables) }
      }
    }
    if let e = try? QueryExpression(parsing: text) {
      checkPrinting(e, "expression") { try QueryExpression(parsing: $0) }
      if let c = try? CompiledExpression.compile(e, entity: sample, model: Fuzz.model, variables: FuzzObjects.types) {
        for o in graph.objects(of: sample) {
          _ = try? c.evaluateValues(o, in: graph, variables: graph.variables)
          _ = try? c.evaluateObjects(o, in: graph, variables: graph.variables)
        }
      }
    }
  }

  /// The printer's law: a tree prints to text that parses to the same tree and prints the same.
  private static func checkPrinting<T: Equatable & CustomStringConvertible>(
    _ tree: T, _ kind: String, _ parse: (String) throws -> T
  ) {
    let printed = tree.description
    do {
      let again = try parse(printed)
      check(again == tree, "a printed \(kind) parses to another tree: \(printed)")
      check(again.description == printed, "a printed \(kind) prints differently: \(printed)")
    } catch {
      fatalError("fuzz law broken: a printed \(kind) does not parse: \(printed): \(error)")
    }
  }
}

/// A few objects of the fuzz model in memory, with values at the edges of their types.
final class FuzzObjects: QueryObjectSource, @unchecked Sendable {
  static let shared = FuzzObjects()

  /// The variables a predicate may use, and their types.
  static let types: [String: QueryType] = [
    "n": .value(.int64), "s": .value(.string), "d": .value(.double), "ns": .values(.int64),
    "o": .object(Fuzz.entity("Sample").id),
  ]

  let sample = Fuzz.entity("Sample").id
  private(set) var entities: [EntityID] = []
  private var values: [[PropertyID: Value]] = []
  private var links: [[PropertyID: [Int]]] = []
  let variables: [String: QueryVariable<Int>]

  private init() {
    variables = [
      "n": .value(.int64(.max)), "s": .value(.string("ab*c?é")), "d": .value(.double(-0.0)),
      "ns": .values([.int64(.min), nil, .int64(1)]), "o": .object(1),
    ]
    let s = Fuzz.entity("Sample")
    let tag = Fuzz.entity("Tag")
    func a(_ name: String) -> PropertyID { Fuzz.property("Sample", name) }
    func r(_ name: String) -> PropertyID { Fuzz.property("Sample", name) }
    add(
      s.id,
      [
        a("label"): .string("first"), a("s"): .string("Straße 桃 e\u{301}"), a("i16"): .int16(.max),
        a("i32"): .int32(.min), a("i64"): .int64(.max), a("d"): .double(.nan), a("f"): .float(.infinity),
        a("dec"): .decimal(Fuzz.decimal("-12345678901234567890.123")), a("b"): .boolean(true),
        a("t"): .date(Date(timeIntervalSince1970: -1e12)), a("bin"): .binary([0, 255, 7]),
        a("u"): .uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))),
        a("url"): .uri("https://example.com/?q=1"),
      ])
    add(s.id, [a("i64"): .int64(.min), a("d"): .double(-.greatestFiniteMagnitude), a("s"): .string("")])
    add(s.id, [:])
    add(tag.id, [Fuzz.property("Tag", "name"): .string("t")])
    links[0][r("children")] = [1, 2]
    links[1][r("parent")] = [0]
    links[2][r("parent")] = [0]
    links[0][r("tags")] = [3]
    links[1][r("tags")] = [3]
    links[3][Fuzz.property("Tag", "samples")] = [0, 1]
  }

  private func add(_ entity: EntityID, _ row: [PropertyID: Value]) {
    entities.append(entity)
    values.append(row)
    links.append([:])
  }

  func objects(of entity: EntityID) -> [Int] { entities.indices.filter { entities[$0] == entity } }

  func value(of object: Int, attribute: PropertyID) throws -> Value? { values[object][attribute] }

  func related(to object: Int, relationship: PropertyID) throws -> [Int] { links[object][relationship] ?? [] }
}
