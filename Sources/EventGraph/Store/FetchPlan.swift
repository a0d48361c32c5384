internal import LMDB

/// What a fetch of one entity reads and checks: the predicate compiled with its variables'
/// types, the variables' values, and the index ranges that hold every object it can match
/// (`nil`: the entity is scanned).
///
/// Shared by the dynamic fetch and the typed fetch that decodes each record as it is
/// matched, so that both choose candidates and test them the same way.
struct FetchPlan {
  let entity: Entity
  let compiled: CompiledPredicate?
  let bindings: [String: QueryVariable<ObjectID>]
  let ranges: [IndexPlan]?
  let source: ProjectionSource<ReadHandle>

  init(_ e: Entity, where predicate: String?, variables: [String: Value], in snapshot: Snapshot) throws {
    let model = snapshot.model
    entity = e
    compiled = try predicate.map {
      try CompiledPredicate.compile($0, entity: e.id, model: model, variables: variables.mapValues { .value($0.type) })
    }
    bindings = variables.mapValues { QueryVariable<ObjectID>.value($0) }
    let ring = snapshot.reader.dbs.keyring
    let blind: IndexPlan.BlindHashing? = ring.flatMap { r in r.canHash ? { r.blindHash($0) } : nil }
    ranges = compiled.flatMap { IndexPlan.choose($0, entity: e, variables: variables, blind: blind) }
    source = ProjectionSource(reader: snapshot.reader)
  }

  /// The objects to test, in identity order: the ranges' objects, or every live object of
  /// the entity and its sub-entities.
  func candidates() throws -> [ObjectID] {
    let reader = source.reader
    guard let ranges else { return try reader.objects(of: entity.id) }
    return try IndexPlan.candidates(ranges, reader: reader, kinds: reader.model.descendants(of: entity.id))
  }

  /// Whether the predicate holds for `o` (a live object).
  func matches(_ o: ObjectID) throws -> Bool {
    try compiled?.evaluate(o, in: source, variables: bindings) ?? true
  }

  /// The state of `o` when it is live and the predicate holds for it.
  func matchingState(_ o: ObjectID) throws -> ObjectState? {
    guard let state = try source.state(o), try matches(o) else { return nil }
    return state
  }

  /// The indexed attributes whose ranges gave the candidates, each once: `name, age`.
  var index: String? {
    ranges.map { p in
      p.map(\.attribute.name).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        .joined(separator: ", ")
    }
  }
}
