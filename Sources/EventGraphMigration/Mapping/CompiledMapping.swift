import EventGraph

/// A mapping checked against both models, completed by inference, with every predicate
/// and expression compiled: what the upcaster runs.
///
/// Nothing about it can fail halfway
/// through a migration that could not have been found here.
public struct CompiledMapping: Sendable {
  public let sourceModel: Model
  public let destinationModel: Model
  /// Every entity mapping: the file's, in order, then the inferred ones.
  public let mappings: [CompiledEntityMapping]
  /// How many relationship hops any expression follows; a change that far from an object
  /// re-evaluates its mappings.
  let reach: Int
  /// Source entity → the entity whose mappings handle its objects (see ``applies(_:to:)``).
  let handler: [EntityID: EntityID]

  /// Checks `mapping` (or, when `nil`, infers the whole mapping) between two models.
  ///
  /// - Throws: ``MappingError`` naming the file, mapping and property: an unknown entity,
  ///   attribute or mapping, a predicate or expression that does not type-check, or a
  ///   change that cannot be inferred.
  public init(
    _ mapping: MappingModel?, from source: Model, to destination: Model, policies: PolicyRegistry = .init(),
    file: String = "mapping"
  ) throws(MappingError) {
    var builder = MappingBuilder(source: source, destination: destination, policies: policies, file: file)
    self.mappings = try builder.build(mapping)
    self.sourceModel = source
    self.destinationModel = destination
    self.reach = builder.reach
    var handler: [EntityID: EntityID] = [:]
    let named = Set(mappings.compactMap { $0.source?.id })
    for e in source.entities {
      var current: EntityID? = e.id
      while let c = current, !named.contains(c) { current = source.entity(c)?.parent }
      handler[e.id] = current
    }
    self.handler = handler
  }

  /// Whether `m` maps objects of `entity`: those of its source entity, and of sub-entities
  /// that no mapping names (so an object of a sub-entity is migrated once, by its own
  /// entity's mappings, not also as an object of its parent entity).
  func applies(_ m: CompiledEntityMapping, to entity: EntityID) -> Bool {
    guard let s = m.source else { return false }
    return handler[entity] == s.id
  }

  /// The mappings that map objects of `entity`.
  func mappings(forSource entity: EntityID) -> [CompiledEntityMapping] {
    mappings.filter { applies($0, to: entity) }
  }

  /// The one-object mapping that keeps the identity of objects of `entity` and makes
  /// objects of `destination` (or a sub-entity): where an inferred relationship finds the
  /// destination object of each of its targets.
  func identityMapping(for entity: EntityID, making destination: EntityID) -> Int? {
    mappings.first { m in
      guard m.keepsIdentity, applies(m, to: entity), let d = m.destination else { return false }
      return destinationModel.isKind(d.id, of: destination)
    }?.index
  }
}

/// One checked entity mapping.
public struct CompiledEntityMapping: Sendable {
  public let index: Int
  public let name: String
  public let source: Entity?
  public let destination: Entity?
  public let filter: CompiledPredicate?
  /// Destination attributes and the expressions that compute them, for a one-object mapping.
  let attributes: [(Attribute, CompiledExpression)]
  /// The entries of a declarative split (empty: one object per source).
  let instances: [(key: String, when: CompiledPredicate?, attributes: [(Attribute, CompiledExpression)])]
  /// Destination relationship, the mapping whose destination objects it links, and the
  /// source objects; `perObject` (inferred relationships): each source object's own
  /// entity's one-object mapping, so links to objects of sub-entities are kept.
  let relationships: [(Relationship, target: Int, sources: CompiledExpression, perObject: Bool)]
  let policy: (any MigrationPolicy)?
  public let policyName: String?
  /// Whether the destination object keeps the source object's identity.
  public let keepsIdentity: Bool
  /// Whether the mapping was inferred rather than written.
  public let isInferred: Bool
}
