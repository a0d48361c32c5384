import EventGraphModel

/// The compiled form of predicates and expressions: names resolved to IDs, types
/// checked, constants prepared, so that evaluation only walks a small tree.
///
/// Special cases of the common shapes (`attribute == nil`, `attribute op constant`)
/// have cases of their own, so those evaluate with one call to the object source.

/// A compiled predicate.
@usableFromInline
indirect enum PredicateCode: Sendable {
  case constant(Bool)
  case not(PredicateCode)
  /// Both, the left first. Binary (a balanced tree for long chains) rather than a list,
  /// so that evaluation borrows its operands instead of retaining them.
  case and(PredicateCode, PredicateCode)
  /// Either, the left first.
  case or(PredicateCode, PredicateCode)
  /// `attribute == nil` (`isNil` true) or `attribute != nil` on the evaluated object.
  case attributeIsNil(PropertyID, isNil: Bool)
  /// An attribute of the evaluated object against a constant.
  case attributeTest(PropertyID, ConstantTest)
  /// One value against a constant.
  case valueTest(ValueCode, ConstantTest)
  /// One value against another computed value.
  case compare(ValueCode, QueryOperator, QueryStringOptions, ValueCode)
  /// `value IN collection`, the collection computed.
  case member(ValueCode, QueryStringOptions, ManyCode)
  /// `value BETWEEN {low, high}`, the bounds computed.
  case between(ValueCode, QueryStringOptions, ValueCode, ValueCode)
  /// `ANY`/`ALL`/`NONE` over a collection of values.
  case quantified(QueryQuantifier, ManyCode, RightOperand)
  /// A to-one relationship (or object variable) tested for nil.
  case objectIsNil(ObjectsCode, isNil: Bool)
}

/// The right side of a quantified comparison, computed once per evaluation.
@usableFromInline
enum RightOperand: Sendable {
  case constant(ConstantTest)
  case value(QueryOperator, QueryStringOptions, ValueCode)
  case collection(QueryStringOptions, ManyCode)
  case bounds(QueryStringOptions, ValueCode, ValueCode)
}

/// Where a key path starts: the evaluated object, a `$variable`, or the elements a
/// `SUBQUERY` keeps.
@usableFromInline
indirect enum PathRoot: Sendable {
  case object
  case variable(String, offset: Int?)
  /// The objects of the collection for which the predicate holds, evaluated on the
  /// evaluated object with the variable bound to each.
  case subquery(ObjectsCode, String, PredicateCode)
}

/// A key path through relationships, ending at objects.
@usableFromInline
struct ObjectsCode: Sendable {
  @usableFromInline let root: PathRoot
  /// The relationships to follow, in order, and the elements picked from ordered ones.
  @usableFromInline let steps: [ObjectStep]
  /// Whether some step (or the root) is to-many.
  @usableFromInline let isToMany: Bool

  @usableFromInline
  init(root: PathRoot, steps: [ObjectStep], isToMany: Bool) {
    self.root = root
    self.steps = steps
    self.isToMany = isToMany
  }
}

/// One step of an ``ObjectsCode`` path.
@usableFromInline
enum ObjectStep: Sendable {
  /// Follow a relationship.
  case follow(PropertyID)
  /// Keep one element of the ordered to-many the step before led to (the checker puts
  /// one only after a to-many relationship followed from one object).
  case element(QueryElementIndex)
}

/// A compiled expression with one value (or none).
@usableFromInline
indirect enum ValueCode: Sendable {
  case literal(Value?)
  /// An attribute of the evaluated object.
  case attribute(PropertyID)
  /// An attribute at the end of to-one relationships (or of an object variable).
  case attributeOf(ObjectsCode, PropertyID)
  /// A `$variable` bound to one value.
  case variable(String, offset: Int?)
  /// `@count` of objects.
  case countObjects(ObjectsCode)
  /// `@count` of a collection of values.
  case countValues(ManyCode)
  /// `@sum`, `@avg`, `@min`, `@max` of numbers (or dates, for min and max) of the
  /// given attribute type.
  case aggregate(QueryAggregate, ManyCode, AttributeType, offset: Int?)
  case arithmetic(ArithmeticOperator, ValueCode, ValueCode, offset: Int?)
  case negation(ValueCode, offset: Int?)
  case function(QueryFunction, [ValueCode], offset: Int?)
}

/// A compiled expression with many values.
@usableFromInline
indirect enum ManyCode: Sendable {
  /// An attribute of every object a to-many key path reaches.
  case attributeOf(ObjectsCode, PropertyID)
  /// `{a, b, c}`.
  case list([ValueCode])
  /// A `$variable` bound to a collection of values.
  case variable(String, offset: Int?)
}

/// A compiled expression of any shape: the result of a ``CompiledExpression``.
@usableFromInline
enum ExpressionCode: Sendable {
  case value(ValueCode)
  case values(ManyCode)
  case objects(ObjectsCode)
}
