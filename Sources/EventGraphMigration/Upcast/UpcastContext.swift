import EventGraph

/// Everything one source commit's migration works with.
final class UpcastContext {
  let source: SourceGraph
  let associations: Associations
  let sourceModel: Model
  /// The destination transaction of the current source commit.
  var destination: Transaction

  init(source: SourceGraph, associations: Associations, sourceModel: Model, destination: Transaction) {
    self.source = source
    self.associations = associations
    self.sourceModel = sourceModel
    self.destination = destination
  }

  /// The live source object with this identity, or `nil` when it does not exist (now).
  func sourceObject(_ id: ObjectID) throws -> SourceObject? {
    try source.state(id).map { SourceObject(id: id, entity: $0.entity) }
  }
}
