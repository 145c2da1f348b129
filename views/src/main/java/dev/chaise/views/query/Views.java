package dev.chaise.views.query;

import dev.chaise.views.js.ReduceProgram;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/** Row-stream plumbing for view queries ({@code dev.chaise.views.ViewQueries}): reduce, skip and limit, concatenation. */
public final class Views {
    private Views() {}

    /** Reduces rows as they stream by, group by group (while a view's tree is being built). */
    public static Iterator<ViewRow> reduce(Iterator<dev.chaise.views.index.TreeReducer.Row> rows, Reducer<?> reducer, long groupLevel,
                                           boolean descending, dev.chaise.views.collation.Collation collation) {
        return new Grouper(rows, reducer, groupLevel, descending, collation);
    }

    public static Reducer<?> jsReducer(ReduceProgram program, int index) {
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
