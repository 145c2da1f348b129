package dev.chaise.archfixture.a;

import dev.chaise.archfixture.a.b.Child;

/** A fixture for {@code PackageCyclesTest}: with {@link Child} it forms the package cycle a -> a.b -> a. */
public final class Parent {
    public Child child() {
        return new Child();
    }
}
