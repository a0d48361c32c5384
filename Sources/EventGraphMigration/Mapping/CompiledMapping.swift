import EventGraph

/// A mapping checked against both models, completed by inference, with every predicate
/// and expression compiled: what the upcaster runs. Nothing about it can fail halfway
/// through a migration that could not have been found here.
public struct CompiledMapping: Sendable {
  public let sourceModel: Model
  public let destinationModel: Model
  /// Every entity mapping: the file's, in order, then the inferred ones.
  public let mappings: [CompiledEntityMapping]
  /// How many relationship hops any expression follows; a change that far from an object
  /// re-evaluates its mappings.
  let reach: Int

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
  }

  /// The mappings whose source entity `entity` is (or inherits from).
  func mappings(forSource entity: EntityID) -> [CompiledEntityMapping] {
    mappings.filter { m in m.source.map { sourceModel.isKind(entity, of: $0.id) } ?? false }
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
  let relationships: [(Relationship, target: Int, sources: CompiledExpression)]
  let policy: (any MigrationPolicy)?
  public let policyName: String?
  /// Whether the destination object keeps the source object's identity.
  public let keepsIdentity: Bool
  /// Whether the mapping was inferred rather than written.
  public let isInferred: Bool
}
