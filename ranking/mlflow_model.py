"""Entry point MLflow stores with every logged ranker ("models from code").

MLflow runs this file when the model is loaded; the ranker itself is the
``ranker`` artifact, read by :class:`ranking.tracking.RankerPyfunc`.
"""

import mlflow

from ranking.tracking import RankerPyfunc

mlflow.models.set_model(RankerPyfunc())
