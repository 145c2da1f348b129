package dev.chaise.views.query;

import dev.chaise.views.js.ReduceProgram;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/** Row-stream plumbing for {@link dev.chaise.views.ViewService}: reduce, skip and limit, concatenation. */
public final class Views {
    private Views() {}

    public static Iterator<ViewRow> reduce(Iterator<ViewRow> rows, Reducer reducer, long groupLevel) {
        return new Grouper(rows, reducer, groupLevel);
    }

    /** Groups rows whose values are partial reductions (per-key aggregates). */
    public static Iterator<ViewRow> rereduce(Iterator<ViewRow> partials, Reducer reducer, long groupLevel) {
        return new Grouper(partials, reducer, groupLevel, true);
    }

    public static Reducer jsReducer(ReduceProgram program, int index) {
        return new JsReducer(program, index);
    }

    public static <T> Iterator<T> concat(List<Iterator<T>> parts) {
        return ViewReader.concat(parts);
    }

    public static <T> Iterator<T> skipLimit(Iterator<T> it, long skip, long limit) {
        return new Iterator<>() {
            long skipped;
            long given;

            @Override
            public boolean hasNext() {
                while (skipped < skip && it.hasNext()) {
                    it.next();
                    skipped++;
                }
                return given < limit && it.hasNext();
            }

            @Override
            public T next() {
                if (!hasNext()) throw new NoSuchElementException();
                given++;
                return it.next();
            }
        };
    }

    /** Runs {@code then} once, when the last row has been read. */
    public static <T> Iterator<T> onExhausted(Iterator<T> it, Runnable then) {
        return new Iterator<>() {
            boolean done;

            @Override
            public boolean hasNext() {
                boolean h = it.hasNext();
                if (!h && !done) {
                    done = true;
                    then.run();
                }
                return h;
            }

            @Override
            public T next() {
                if (!hasNext()) throw new NoSuchElementException();
                return it.next();
            }
        };
    }
}
